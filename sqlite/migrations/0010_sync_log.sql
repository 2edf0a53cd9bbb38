-- The sync log: once sync is set up on this store (a host id in
-- sync_state), every change it makes is also a record here, in the same
-- transaction: its stamp (synclog.HLC) and its payload as synclog.Encode
-- writes it. AUTOINCREMENT numbers the records without reusing a number
-- and, since a rolled-back transaction takes its number back with it,
-- without gaps: the number is the record's index in the host's log.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.
CREATE TABLE IF NOT EXISTS sync_log (
    idx     INTEGER PRIMARY KEY AUTOINCREMENT,
    hlc     INTEGER NOT NULL,
    payload BLOB NOT NULL
) STRICT;

-- What sync keeps of this store: its host id ('host'), and later what it
-- pushed and applied.
CREATE TABLE IF NOT EXISTS sync_state (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT, WITHOUT ROWID;
