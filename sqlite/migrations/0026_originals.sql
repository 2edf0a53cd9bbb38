-- The original bytes an import read from each agent's file, compressed
-- with zstd, in chunks by offset (loom.OriginalChunk): a file that grows
-- at its end adds a chunk of its new bytes, one rewritten is kept again
-- from offset 0. `loom session reimport` reads them back; redaction
-- rewrites data in place; deleting a session removes its rows
-- (docs/durability.md).
CREATE TABLE IF NOT EXISTS originals (
    user_id    TEXT NOT NULL,
    path       TEXT NOT NULL,
    off        INTEGER NOT NULL,
    size       INTEGER NOT NULL,
    tool       TEXT NOT NULL,
    bundle     TEXT NOT NULL,
    session_id TEXT NOT NULL DEFAULT '',
    tail       TEXT NOT NULL,
    mtime_ns   INTEGER NOT NULL,
    kept_at    INTEGER NOT NULL,
    data       BLOB NOT NULL,
    PRIMARY KEY (user_id, path, off)
) STRICT;
CREATE INDEX IF NOT EXISTS originals_session ON originals (user_id, session_id);
CREATE INDEX IF NOT EXISTS originals_tool ON originals (user_id, tool);
