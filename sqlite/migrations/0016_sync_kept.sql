-- The records of other hosts this store has pulled, sealed as the hub
-- served them (header and body), so that it can send them again to a
-- hub that lost them: a hub restored from an old copy, or emptied, after
-- the machine that wrote them is gone (see docs/sync.md, "A lost hub").
-- sync_state 'kept <host>' is the index up to which every record of the
-- host from 1 is here.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.
CREATE TABLE IF NOT EXISTS sync_kept (
    host   TEXT NOT NULL,
    idx    INTEGER NOT NULL,
    header BLOB NOT NULL,
    body   BLOB NOT NULL,
    PRIMARY KEY (host, idx)
) STRICT;
