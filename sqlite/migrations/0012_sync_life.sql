-- Whether each session is in the trash, as merged from sync records (see
-- docs/sync.md, "Trash, restore and purge"), and which sessions were
-- purged. Local changes keep the same as they record themselves.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.

-- Each session's synclog.Life as JSON: its latest trash (stamp, time and
-- what the trash's writer had seen), its latest restore, and for every
-- host the highest index of its records whose work the session holds.
CREATE TABLE IF NOT EXISTS sync_life (
    session_id TEXT PRIMARY KEY,
    life       TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- Sessions purged here or by another host: records for them that arrive
-- later are dropped.
CREATE TABLE IF NOT EXISTS sync_purged (
    session_id TEXT PRIMARY KEY
) STRICT, WITHOUT ROWID;

CREATE TRIGGER IF NOT EXISTS sync_life_ad AFTER DELETE ON sessions
BEGIN
    DELETE FROM sync_life WHERE session_id = old.id;
END;
