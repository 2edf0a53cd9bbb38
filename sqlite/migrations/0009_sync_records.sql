-- The hub of sync: `loom serve` keeps each user's hosts' record logs as
-- their clients push them. A record is a header the hub stores as it is
-- and a body sealed on the client (ciphertext); the hub reads neither.
-- Each host's log is numbered from 1 without gaps. IF NOT EXISTS: tests
-- that set a store back to an older version run this again.
CREATE TABLE IF NOT EXISTS sync_records (
    user_id     TEXT NOT NULL,
    host_id     TEXT NOT NULL,
    idx         INTEGER NOT NULL CHECK (idx >= 1),
    header      BLOB NOT NULL,
    body        BLOB NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (user_id, host_id, idx)
) STRICT;

-- What the hub holds of each host, kept with the records it counts, so
-- that a client learns every host's last index without a scan.
CREATE TABLE IF NOT EXISTS sync_hosts (
    user_id    TEXT NOT NULL,
    host_id    TEXT NOT NULL,
    last       INTEGER NOT NULL,
    records    INTEGER NOT NULL,
    bytes      INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (user_id, host_id)
) STRICT, WITHOUT ROWID;
