-- The records of this store's sync log that `loom secrets redact`
-- rewrote with their secrets replaced (see docs/sync.md, "Redacted
-- records"): for each (idx, the row of sync_log), the SHA-256 digests
-- of the payloads it had before, 32 bytes each, oldest first. The hub
-- may hold any of them, sealed: a sync takes a record on the hub whose
-- payload has one of these digests as this one.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.
CREATE TABLE IF NOT EXISTS sync_redacted (
    idx INTEGER PRIMARY KEY,
    was BLOB NOT NULL
) STRICT;
