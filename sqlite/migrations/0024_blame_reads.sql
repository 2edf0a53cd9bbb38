-- What loom blame reads of a whole repository, from indexes that hold
-- it (docs/blame.md): the roots its project's sessions recorded, and
-- the edits of every file in it (op, tool, from_path and lines, by
-- path). Each loom process starts with an empty page cache; read from
-- the rows, the two cost a page a session and a page an edit, 4,000
-- pages (0.7 s of a 1 s blame) for a repository of 2,000 sessions in a
-- store of 100,000; read from these, a few dozen. The edit index is
-- small beside the bodies it is read from (1% of a store), so holding
-- its lines twice costs little. PostgreSQL keeps its buffers between
-- clients and needs neither.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.
CREATE INDEX IF NOT EXISTS sessions_project_roots ON sessions (user_id, project_id, deleted_at, project_root);

DROP INDEX IF EXISTS edits_path;
CREATE INDEX edits_path ON edits (path, op, tool, from_path, lines);
