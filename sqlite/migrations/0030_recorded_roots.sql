-- The roots every session of a user recorded (RecordedRoots: loom
-- blame's first blame of a file matches the roots of other machines to
-- its repository), read from an index that holds them in the order the
-- query groups them: read from the rows, a first blame read a page a
-- session for four columns and sorted them, a sixth of what a short
-- file's first blame spent in SQLite (docs/blame.md, "Speed"). Partial:
-- only the live sessions that recorded a root are in it.
-- TestRecordedRootsFromIndex checks the plan.
CREATE INDEX IF NOT EXISTS sessions_recorded_roots ON sessions (user_id, project_root, project_id, project_name, deleted_at)
    WHERE deleted_at IS NULL AND project_root <> '';
