-- The fragments of another host's record too large to be one (see
-- docs/sync.md, "Fragments"), kept as they arrive until the last one
-- lets the record apply; then they go.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.
CREATE TABLE IF NOT EXISTS sync_fragments (
    host TEXT NOT NULL,
    idx  INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (host, idx)
) STRICT;
