-- The version of what loom blame's answer rests on in the store, as in
-- SQLite (docs/blame.md, "The answer kept"): the edit index's rows, the
-- messages and sessions they are read through (a message that reads an
-- indexed body, a session's spans, its trash state, user, agent, time
-- and project root), and so a rewrite of a body (a redaction), which
-- deletes its edits. Each such statement sets n to a new random number
-- in its transaction: one value names one state of all that. A
-- sequence would not do: its next value is seen before the transaction
-- that took it commits, and a blame would keep an answer of the state
-- before under it. The row is locked by the writer that changed it
-- until it commits, which orders the writers of edits; appends of
-- messages whose bodies hold no indexed edit (most of them) do not
-- touch it.
CREATE TABLE IF NOT EXISTS edits_version (
    id integer PRIMARY KEY CHECK (id = 1),
    n  bigint NOT NULL
);

INSERT INTO edits_version (id, n) VALUES (1, (random() * 9e18)::bigint) ON CONFLICT DO NOTHING;

CREATE OR REPLACE FUNCTION loom_edits_version_any() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM changed) THEN
        UPDATE edits_version SET n = (random() * 9e18)::bigint;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION loom_edits_version_message() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM changed c JOIN edits e ON e.body_id = c.body_id) THEN
        UPDATE edits_version SET n = (random() * 9e18)::bigint;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION loom_edits_version_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE edits_version SET n = (random() * 9e18)::bigint;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS edits_version_ai ON edits;
CREATE TRIGGER edits_version_ai AFTER INSERT ON edits
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION loom_edits_version_any();
DROP TRIGGER IF EXISTS edits_version_au ON edits;
CREATE TRIGGER edits_version_au AFTER UPDATE ON edits
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION loom_edits_version_any();
DROP TRIGGER IF EXISTS edits_version_ad ON edits;
CREATE TRIGGER edits_version_ad AFTER DELETE ON edits
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION loom_edits_version_any();

DROP TRIGGER IF EXISTS messages_version_ai ON messages;
CREATE TRIGGER messages_version_ai AFTER INSERT ON messages
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION loom_edits_version_message();
DROP TRIGGER IF EXISTS messages_version_ad ON messages;
CREATE TRIGGER messages_version_ad AFTER DELETE ON messages
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION loom_edits_version_message();
DROP TRIGGER IF EXISTS messages_version_au ON messages;
CREATE TRIGGER messages_version_au AFTER UPDATE OF session_id, seq, id, turn, body_id, model, provider, created_at ON messages
    FOR EACH ROW WHEN (OLD.session_id IS DISTINCT FROM NEW.session_id OR OLD.seq IS DISTINCT FROM NEW.seq OR OLD.id IS DISTINCT FROM NEW.id
        OR OLD.turn IS DISTINCT FROM NEW.turn OR OLD.body_id IS DISTINCT FROM NEW.body_id OR OLD.model IS DISTINCT FROM NEW.model
        OR OLD.provider IS DISTINCT FROM NEW.provider OR OLD.created_at IS DISTINCT FROM NEW.created_at)
    EXECUTE FUNCTION loom_edits_version_row();

DROP TRIGGER IF EXISTS spans_version_ai ON spans;
CREATE TRIGGER spans_version_ai AFTER INSERT ON spans
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION loom_edits_version_any();
DROP TRIGGER IF EXISTS spans_version_au ON spans;
CREATE TRIGGER spans_version_au AFTER UPDATE ON spans
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION loom_edits_version_any();
DROP TRIGGER IF EXISTS spans_version_ad ON spans;
CREATE TRIGGER spans_version_ad AFTER DELETE ON spans
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION loom_edits_version_any();

DROP TRIGGER IF EXISTS sessions_version_ai ON sessions;
CREATE TRIGGER sessions_version_ai AFTER INSERT ON sessions
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION loom_edits_version_any();
DROP TRIGGER IF EXISTS sessions_version_ad ON sessions;
CREATE TRIGGER sessions_version_ad AFTER DELETE ON sessions
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION loom_edits_version_any();
DROP TRIGGER IF EXISTS sessions_version_au ON sessions;
CREATE TRIGGER sessions_version_au AFTER UPDATE OF id, user_id, deleted_at, source_tool, created_at, project_id, project_name, project_root ON sessions
    FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at
        OR OLD.source_tool IS DISTINCT FROM NEW.source_tool OR OLD.created_at IS DISTINCT FROM NEW.created_at
        OR OLD.project_id IS DISTINCT FROM NEW.project_id OR OLD.project_name IS DISTINCT FROM NEW.project_name
        OR OLD.project_root IS DISTINCT FROM NEW.project_root)
    EXECUTE FUNCTION loom_edits_version_row();
