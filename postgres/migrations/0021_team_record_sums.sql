-- Each team record's sum, sha256(sha256(header) || sha256(body))
-- (loom.TeamRecordSum), made by PostgreSQL as a row is written or
-- edited: what an author's machine audits the hub by at every sync
-- (docs/team.md, "A dropped record is restored or every member is
-- told") reads 32 bytes a record, never the records again.
ALTER TABLE team_records ADD COLUMN sum bytea GENERATED ALWAYS AS (sha256(sha256(header) || sha256(body))) STORED;
