-- Look-ups of a user's sessions by key, and by parent, newest first (an
-- import finding the session a file was imported into, a reference by
-- key, the sessions forked from or spawned by one): sessions_key_any held
-- (user_id, key) and sessions_parent (parent_id) but not the order, and
-- SQLite's planner, which has no statistics on a store that never ran
-- ANALYZE, preferred sessions_recent (user_id, updated_at, id) for the
-- order and walked every session of the user to find the few it
-- wanted: an import of n sessions cost n walks of the store. These
-- indexes hold what is looked for and the order both, so a look-up
-- reads its entries and stops. Each replaces the index whose columns
-- it starts with, and serves what that one did, so that a write
-- maintains as many indexes as before. sessions_key_recent is not
-- partial: a look-up of the trash by key reads it too.
-- TestHotQueriesPlannedOnKeys checks the plans.
DROP INDEX IF EXISTS sessions_key_any;
CREATE INDEX IF NOT EXISTS sessions_key_recent ON sessions (user_id, key, updated_at DESC, id DESC);
DROP INDEX IF EXISTS sessions_parent;
CREATE INDEX IF NOT EXISTS sessions_parent ON sessions (parent_id, updated_at DESC, id DESC) WHERE parent_id IS NOT NULL;
