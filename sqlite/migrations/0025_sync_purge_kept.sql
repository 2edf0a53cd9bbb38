-- Each purge made here or applied here, per session it took
-- (sessionstore.PurgeKept as JSON): its stamp and what its writer had
-- seen, so that work it had not seen that arrives later goes to the
-- copy that work's machine saves of the session; for a purge made here
-- also its index in this store's log and, until the sync that sends it
-- has pulled, the session's row and messages as they were (see
-- docs/sync.md, "Trash, restore and purge"). The session's own trigger
-- does not touch it: its row is gone already.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.
CREATE TABLE IF NOT EXISTS sync_purge_kept (
    session_id TEXT PRIMARY KEY,
    kept       TEXT NOT NULL
) STRICT;
