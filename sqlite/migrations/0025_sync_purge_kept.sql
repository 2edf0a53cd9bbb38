-- A session this store purged itself, as it was (its row and messages,
-- with the purge's stamp, index and what it had seen), kept until the
-- sync that sends the purge has pulled: another machine's turn in it
-- that the purge had not seen, applied meanwhile, makes this store save
-- the copy that machine saves (see docs/sync.md, "Trash, restore and
-- purge"). A session's own trigger does not touch it: the session's row
-- is gone already.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.
CREATE TABLE IF NOT EXISTS sync_purge_kept (
    session_id TEXT PRIMARY KEY,
    kept       TEXT NOT NULL
) STRICT, WITHOUT ROWID;
