-- Whose a teammate's session is, as in SQLite (docs/schema.md): the
-- team's id and the member's name, '' for one's own sessions; the key
-- is unique per team and member too.
ALTER TABLE sessions ADD COLUMN team text NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN member text NOT NULL DEFAULT '';

DROP INDEX IF EXISTS sessions_key;
CREATE UNIQUE INDEX sessions_key ON sessions (user_id, project_id, key, team, member) WHERE key IS NOT NULL AND deleted_at IS NULL;
