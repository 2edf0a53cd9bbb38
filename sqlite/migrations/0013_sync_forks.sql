-- Where each fork made or applied since sync was set up splits from the
-- session it was made from (see docs/sync.md, "Concurrent appends"):
-- a record that follows a message a rewind or a conflict moved goes to
-- the session it moved to, found from here, and forks made from the part
-- of a session a conflict moves follow it.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.

-- id is the fork, parent the session it splits from (a conflict moves a
-- fork to the conflict fork that takes its part), base how many of the
-- parent's messages it shares, kind 'fork' (loom session fork), 'rewind'
-- (the fork a rewind makes: the messages after base moved to it) or
-- 'conflict' (a conflict fork).
CREATE TABLE IF NOT EXISTS sync_forks (
    id     TEXT PRIMARY KEY,
    parent TEXT NOT NULL,
    base   INTEGER NOT NULL,
    kind   TEXT NOT NULL CHECK (kind IN ('fork', 'rewind', 'conflict'))
) STRICT, WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS sync_forks_parent ON sync_forks (parent, base);

CREATE TRIGGER IF NOT EXISTS sync_forks_ad AFTER DELETE ON sessions
BEGIN
    DELETE FROM sync_forks WHERE id = old.id;
END;

-- The key each session claims (synclog.Meta's Key), to find the sessions
-- that claim one key: the earliest claim holds it (synclog.KeyHolder),
-- the others are stored without it until it is let go.
CREATE INDEX IF NOT EXISTS sync_meta_key ON sync_meta (json_extract(meta, '$.Key.Value'))
    WHERE json_extract(meta, '$.Key.Value') <> '';
