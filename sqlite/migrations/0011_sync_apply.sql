-- What applying other hosts' sync records needs beside the rows (see
-- docs/sync.md, "Merge rules"). Local changes keep the same stamps as
-- they record themselves, so that a remote change older than a local
-- one does not overwrite it.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.

-- The applied vector: for every other host, the index of the last of its
-- records this store has applied. Its records are applied in order, so
-- the next one must be idx + 1.
CREATE TABLE IF NOT EXISTS sync_applied (
    host TEXT PRIMARY KEY,
    idx  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Each session's metadata as merged from records: synclog.Meta as JSON,
-- every field with its value, the stamp that wrote it and its depth.
-- The row in sessions holds the values; these say which write they are.
CREATE TABLE IF NOT EXISTS sync_meta (
    session_id TEXT PRIMARY KEY,
    meta       TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- The stamp of the record that appended each message (by the message's
-- id, which it keeps wherever a fork or a conflict moves it), and of
-- the latest usage update it took (NULL: none since the append).
CREATE TABLE IF NOT EXISTS sync_messages (
    id         TEXT PRIMARY KEY,
    hlc        INTEGER NOT NULL,
    host       TEXT NOT NULL,
    usage_hlc  INTEGER,
    usage_host TEXT
) STRICT, WITHOUT ROWID;

-- The stamp of the latest update of a message's part (a part not here
-- is as its message's append wrote it).
CREATE TABLE IF NOT EXISTS sync_parts (
    message_id TEXT NOT NULL,
    part_id    TEXT NOT NULL,
    hlc        INTEGER NOT NULL,
    host       TEXT NOT NULL,
    PRIMARY KEY (message_id, part_id)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER IF NOT EXISTS sync_meta_ad AFTER DELETE ON sessions
BEGIN
    DELETE FROM sync_meta WHERE session_id = old.id;
END;
