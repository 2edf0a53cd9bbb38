-- The git branch a session was on, and where an imported session came
-- from: the tool that wrote it, that tool's version and the source file.
ALTER TABLE sessions ADD COLUMN git_branch text NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN source_tool text NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN source_version text NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN source_path text NOT NULL DEFAULT '';

-- What `loom session import --from` read: one row per source file, with
-- its size and modification time when it was read, so that a re-run
-- recognises an unchanged file without reading it. bundle is the main
-- file of the group the file was read with; source_id and session_id
-- name the source session of a one-session file and its loom copy.
CREATE TABLE import_files (
    user_id     text NOT NULL,
    path        text NOT NULL,
    tool        text NOT NULL,
    bundle      text NOT NULL,
    size        bigint NOT NULL,
    mtime_ns    bigint NOT NULL,
    source_id   text NOT NULL DEFAULT '',
    session_id  text NOT NULL DEFAULT '',
    imported_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, path)
);
