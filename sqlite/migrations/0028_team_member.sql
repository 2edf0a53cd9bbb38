-- Whose a teammate's session is, in a team's store on a member's
-- machine (docs/team.md): the team's id and the member's name as the
-- team's verified chain names the record's author. '' for one's own
-- sessions. The key stays the member's own key, so the key is unique
-- per team and member too: two members' sessions of one key are two
-- sessions. The key's columns come first, as before, so that a look-up
-- by key still reads the index.
ALTER TABLE sessions ADD COLUMN team TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN member TEXT NOT NULL DEFAULT '';

DROP INDEX IF EXISTS sessions_key;
CREATE UNIQUE INDEX sessions_key ON sessions (user_id, project_id, key, team, member) WHERE key IS NOT NULL AND deleted_at IS NULL;
