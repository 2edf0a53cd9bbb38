-- The edit index (docs/blame.md): the file changes agents' tool calls
-- made, read from the stored bodies that hold the calls, one row per
-- change. A body is marked in edits_pending in the transaction that
-- stores it (an append, an import, an applied sync record) or rewrites
-- it (a redaction); package fileedit reads the marked bodies and
-- stores their edits before the index is read, so that a write pays
-- for one mark and no parsing. Like vectors, edits are derived data:
-- never synced or exported, gone with their body, and made again from
-- the bodies when deleted (mark every body: the recipe in schema.md).
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.
CREATE TABLE IF NOT EXISTS edits (
    body_id   INTEGER NOT NULL,
    n         INTEGER NOT NULL,
    part_id   TEXT NOT NULL,
    tool      TEXT NOT NULL,
    op        TEXT NOT NULL,
    path      TEXT NOT NULL,
    from_path TEXT NOT NULL DEFAULT '',
    -- 8 bytes a line put in (big-endian FNV-1a of the line with its
    -- spaces evened out), 8 zero bytes between runs of lines.
    lines     BLOB NOT NULL,
    PRIMARY KEY (body_id, n)
) STRICT, WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS edits_path ON edits (path);

-- Bodies with tool calls not yet read for the index; mark grows when a
-- body is rewritten, so that what was read of its older form is not
-- stored.
CREATE TABLE IF NOT EXISTS edits_pending (
    body_id INTEGER PRIMARY KEY,
    mark    INTEGER NOT NULL DEFAULT 0
) STRICT;

-- Every body with a tool call there is, read at the first blame.
INSERT OR IGNORE INTO edits_pending (body_id) SELECT id FROM bodies WHERE instr(parts, '"type":"tool"') > 0;

-- A bulk import (bulk_load) marks its bodies in one statement.
CREATE TRIGGER IF NOT EXISTS bodies_ai_edits AFTER INSERT ON bodies
WHEN instr(new.parts, '"type":"tool"') > 0 AND NOT EXISTS (SELECT 1 FROM bulk_load)
BEGIN
    INSERT OR IGNORE INTO edits_pending (body_id) VALUES (new.id);
END;

CREATE TRIGGER IF NOT EXISTS bodies_au_edits AFTER UPDATE OF parts ON bodies
BEGIN
    DELETE FROM edits WHERE body_id = old.id;
    INSERT INTO edits_pending (body_id, mark) VALUES (new.id, 1)
        ON CONFLICT (body_id) DO UPDATE SET mark = mark + 1;
END;

CREATE TRIGGER IF NOT EXISTS bodies_ad_edits AFTER DELETE ON bodies
BEGIN
    DELETE FROM edits WHERE body_id = old.id;
    DELETE FROM edits_pending WHERE body_id = old.id;
END;
