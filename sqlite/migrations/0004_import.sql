-- The git branch a session was on, and where an imported session came
-- from: the tool that wrote it, that tool's version and the source file.
ALTER TABLE sessions ADD COLUMN git_branch TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN source_tool TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN source_version TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN source_path TEXT NOT NULL DEFAULT '';

-- What `loom session import --from` read: one row per source file, with
-- its size and modification time when it was read, so that a re-run
-- recognises an unchanged file without reading it. bundle is the main
-- file of the group the file was read with; source_id and session_id
-- name the source session of a one-session file and its loom copy.
CREATE TABLE import_files (
    user_id     TEXT NOT NULL,
    path        TEXT NOT NULL,
    tool        TEXT NOT NULL,
    bundle      TEXT NOT NULL,
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    source_id   TEXT NOT NULL DEFAULT '',
    session_id  TEXT NOT NULL DEFAULT '',
    imported_at TEXT NOT NULL,
    PRIMARY KEY (user_id, path)
) STRICT, WITHOUT ROWID;
