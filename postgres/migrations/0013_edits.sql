-- The edit index (docs/blame.md), as in SQLite: one row per file change
-- an agent's tool call made, read from the body that holds the call.
-- Bodies are marked in edits_pending by the statement that stores them
-- (an append, an import's COPY, a rewrite that redacts one); package
-- fileedit reads the marked bodies and stores their edits before the
-- index is read. Derived data: never synced or exported, gone with the
-- body. Paths compare bytewise (COLLATE "C"), so that the files below
-- a directory are one range of the index.
CREATE TABLE IF NOT EXISTS edits (
    body_id   bigint NOT NULL,
    n         integer NOT NULL,
    part_id   text NOT NULL,
    tool      text NOT NULL,
    op        text NOT NULL,
    path      text COLLATE "C" NOT NULL,
    from_path text NOT NULL DEFAULT '',
    lines     bytea NOT NULL,
    PRIMARY KEY (body_id, n)
);

CREATE INDEX IF NOT EXISTS edits_path ON edits (path);

CREATE TABLE IF NOT EXISTS edits_pending (
    body_id bigint PRIMARY KEY,
    mark    bigint NOT NULL DEFAULT 0
);

INSERT INTO edits_pending (body_id)
SELECT id FROM bodies WHERE strpos(parts::text, '"type":"tool"') > 0
ON CONFLICT DO NOTHING;

CREATE OR REPLACE FUNCTION loom_edits_stored() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO edits_pending (body_id)
    SELECT id FROM stored WHERE strpos(parts::text, '"type":"tool"') > 0
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS bodies_edits_ai ON bodies;
CREATE TRIGGER bodies_edits_ai AFTER INSERT ON bodies
    REFERENCING NEW TABLE AS stored FOR EACH STATEMENT EXECUTE FUNCTION loom_edits_stored();

CREATE OR REPLACE FUNCTION loom_edits_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM edits WHERE body_id = OLD.id;
    INSERT INTO edits_pending (body_id, mark) VALUES (NEW.id, 1)
    ON CONFLICT (body_id) DO UPDATE SET mark = edits_pending.mark + 1;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS bodies_edits_au ON bodies;
CREATE TRIGGER bodies_edits_au AFTER UPDATE OF parts ON bodies
    FOR EACH ROW EXECUTE FUNCTION loom_edits_changed();

CREATE OR REPLACE FUNCTION loom_edits_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM edits WHERE body_id IN (SELECT id FROM gone);
    DELETE FROM edits_pending WHERE body_id IN (SELECT id FROM gone);
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS bodies_edits_ad ON bodies;
CREATE TRIGGER bodies_edits_ad AFTER DELETE ON bodies
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION loom_edits_gone();
