-- The hub of sync: `loom serve` keeps each user's hosts' record logs as
-- their clients push them. A record is a header the hub stores as it is
-- and a body sealed on the client (ciphertext); the hub reads neither.
-- Each host's log is numbered from 1 without gaps. IF NOT EXISTS: tests
-- that set a store back to an older version run this again. Bodies are
-- ciphertext, which no compression shrinks: they are stored out of line
-- as they are.
CREATE TABLE IF NOT EXISTS sync_records (
    user_id     text NOT NULL,
    host_id     text COLLATE "C" NOT NULL,
    idx         bigint NOT NULL CHECK (idx >= 1),
    header      bytea NOT NULL,
    body        bytea NOT NULL,
    received_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, host_id, idx)
);
ALTER TABLE sync_records ALTER COLUMN body SET STORAGE EXTERNAL;

-- What the hub holds of each host, kept with the records it counts, so
-- that a client learns every host's last index without a scan.
CREATE TABLE IF NOT EXISTS sync_hosts (
    user_id    text NOT NULL,
    host_id    text COLLATE "C" NOT NULL,
    last       bigint NOT NULL,
    records    bigint NOT NULL,
    bytes      bigint NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, host_id)
);
