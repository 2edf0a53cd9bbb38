-- Each team record by the session tag its header names (docs/team.md,
-- "A session has one owner"): the hub checks whose a session is against
-- the first record it holds of the session's tag, signed by its author,
-- not against team_sessions alone, whose rows an operator can give to
-- another member or delete. The tag is read off the header's bytes (a
-- header is compact JSON; the hub parses and verifies the record it
-- finds before it takes its word), so that no header makes a write fail.
CREATE FUNCTION team_record_session(header bytea) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT substring(encode(header, 'escape') FROM '"session":"([0-9a-f]{32})"') $$;

CREATE INDEX team_records_session ON team_records (team_id, team_record_session(header), received_at)
    WHERE team_record_session(header) IS NOT NULL;
