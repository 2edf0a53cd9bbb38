-- The original bytes an import read from each agent's file, compressed
-- with zstd, in chunks by offset (loom.OriginalChunk): a file that grows
-- at its end adds a chunk of its new bytes, one rewritten is kept again
-- from offset 0. `loom session reimport` reads them back; redaction
-- rewrites data in place; deleting a session removes its rows
-- (docs/durability.md).
CREATE TABLE originals (
    user_id    text NOT NULL,
    path       text NOT NULL,
    off        bigint NOT NULL,
    size       bigint NOT NULL,
    tool       text NOT NULL,
    bundle     text NOT NULL,
    session_id text NOT NULL DEFAULT '',
    tail       text NOT NULL,
    mtime_ns   bigint NOT NULL,
    kept_at    timestamptz NOT NULL,
    data       bytea NOT NULL,
    PRIMARY KEY (user_id, path, off)
);
CREATE INDEX originals_session ON originals (user_id, session_id);
CREATE INDEX originals_tool ON originals (user_id, tool);
