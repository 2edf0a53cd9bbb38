-- Look-ups of a user's sessions by key, and by parent, newest first, as
-- in SQLite (docs/schema.md): what is looked for and the order in one
-- index, so that a look-up reads its entries and stops at its limit
-- whatever the planner knows of the table. Each replaces the index
-- whose columns it starts with.
DROP INDEX IF EXISTS sessions_key_any;
CREATE INDEX IF NOT EXISTS sessions_key_recent ON sessions (user_id, key, updated_at DESC, id DESC);
DROP INDEX IF EXISTS sessions_parent;
CREATE INDEX IF NOT EXISTS sessions_parent ON sessions (parent_id, updated_at DESC, id DESC) WHERE parent_id IS NOT NULL;
