-- Two statements an import runs for every file or session, made to read
-- what they look for whatever the planner knows of the tables (the
-- server's autovacuum may be off, and pgx's prepared statements keep a
-- generic plan made when the tables were empty):
--
-- Keeping a chunk of a bundle whose session is known gives that session
-- to the bundle's chunks kept before it without one (UPDATE originals
-- ... WHERE user_id = $2 AND bundle = $3 AND session_id = ''). Through
-- originals_session it read every chunk of the user without a session,
-- and through originals_tool, which a plan made on an empty table
-- chose, every chunk of the user: an import of 24,000 files read 110
-- million rows. This index holds only the chunks without a session (a
-- file of several sessions, a database), by bundle.
--
-- Each change of what the edit index shows sets edits_version's one row
-- (migration 17), by an UPDATE that named no row, so read the table
-- whole: with autovacuum off the table grows by the row's old versions,
-- some pages a transaction, and an import of 24,000 sessions read 240
-- pages for each of its 48,000 updates. The row is now found by its key.
-- TestHotQueriesPlannedOnKeys checks both plans.
CREATE INDEX IF NOT EXISTS originals_unowned ON originals (user_id, bundle) WHERE session_id = '';

CREATE OR REPLACE FUNCTION loom_edits_version_any() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM changed) THEN
        UPDATE edits_version SET n = (random() * 9e18)::bigint WHERE id = 1;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION loom_edits_version_message() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM changed c JOIN edits e ON e.body_id = c.body_id) THEN
        UPDATE edits_version SET n = (random() * 9e18)::bigint WHERE id = 1;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION loom_edits_version_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE edits_version SET n = (random() * 9e18)::bigint WHERE id = 1;
    RETURN NULL;
END $$;
