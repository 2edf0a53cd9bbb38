-- The version of what loom blame's answer rests on in the store
-- (docs/blame.md, "The answer kept"): the edit index's rows, the
-- messages and sessions they are read through (a message that reads an
-- indexed body, a session's spans, its trash state, user, agent, time
-- and project root) and so a rewrite of a body (a redaction), which
-- deletes its edits. Each such change sets n to a new random number in
-- its own transaction, so that one value names one state of all that:
-- a blame that read n before it read the edits may keep its answer
-- under n, and a later blame that reads n again may give that answer
-- without reading an edit. Random rather than counted, so that a store
-- set back to a copy and changed again never comes back to a number an
-- answer of another state was kept under. An append of a message whose
-- body holds no indexed edit (most of them) leaves it; the index's
-- catch-up of that body changes it.
CREATE TABLE IF NOT EXISTS edits_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
) STRICT;

INSERT OR IGNORE INTO edits_version (id, n) VALUES (1, random());

CREATE TRIGGER IF NOT EXISTS edits_ai_version AFTER INSERT ON edits
BEGIN
    UPDATE edits_version SET n = random();
END;
CREATE TRIGGER IF NOT EXISTS edits_au_version AFTER UPDATE ON edits
BEGIN
    UPDATE edits_version SET n = random();
END;
CREATE TRIGGER IF NOT EXISTS edits_ad_version AFTER DELETE ON edits
BEGIN
    UPDATE edits_version SET n = random();
END;

CREATE TRIGGER IF NOT EXISTS messages_ai_version AFTER INSERT ON messages
WHEN EXISTS (SELECT 1 FROM edits WHERE body_id = new.body_id)
BEGIN
    UPDATE edits_version SET n = random();
END;
CREATE TRIGGER IF NOT EXISTS messages_au_version AFTER UPDATE OF session_id, seq, id, turn, body_id, model, provider, created_at ON messages
WHEN old.session_id IS NOT new.session_id OR old.seq IS NOT new.seq OR old.id IS NOT new.id OR old.turn IS NOT new.turn
    OR old.body_id IS NOT new.body_id OR old.model IS NOT new.model OR old.provider IS NOT new.provider OR old.created_at IS NOT new.created_at
BEGIN
    UPDATE edits_version SET n = random();
END;
CREATE TRIGGER IF NOT EXISTS messages_ad_version AFTER DELETE ON messages
WHEN EXISTS (SELECT 1 FROM edits WHERE body_id = old.body_id)
BEGIN
    UPDATE edits_version SET n = random();
END;

CREATE TRIGGER IF NOT EXISTS spans_ai_version AFTER INSERT ON spans
BEGIN
    UPDATE edits_version SET n = random();
END;
CREATE TRIGGER IF NOT EXISTS spans_au_version AFTER UPDATE ON spans
BEGIN
    UPDATE edits_version SET n = random();
END;
CREATE TRIGGER IF NOT EXISTS spans_ad_version AFTER DELETE ON spans
BEGIN
    UPDATE edits_version SET n = random();
END;

CREATE TRIGGER IF NOT EXISTS sessions_ai_version AFTER INSERT ON sessions
BEGIN
    UPDATE edits_version SET n = random();
END;
CREATE TRIGGER IF NOT EXISTS sessions_au_version AFTER UPDATE OF id, user_id, deleted_at, source_tool, created_at, project_id, project_name, project_root ON sessions
WHEN old.id IS NOT new.id OR old.user_id IS NOT new.user_id OR old.deleted_at IS NOT new.deleted_at OR old.source_tool IS NOT new.source_tool
    OR old.created_at IS NOT new.created_at OR old.project_id IS NOT new.project_id OR old.project_name IS NOT new.project_name
    OR old.project_root IS NOT new.project_root
BEGIN
    UPDATE edits_version SET n = random();
END;
CREATE TRIGGER IF NOT EXISTS sessions_ad_version AFTER DELETE ON sessions
BEGIN
    UPDATE edits_version SET n = random();
END;
