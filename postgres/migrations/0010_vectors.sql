-- Vectors for search by meaning (docs/search.md, "Ranking by meaning"),
-- as in SQLite: one per body with text, made by the model vector_state
-- names, as bytes (one signed byte per dimension, see package vecindex)
-- ranked in loom's own index. They are derived data: never synced or
-- exported, all deleted when the model changes, made again in the
-- background.
CREATE TABLE IF NOT EXISTS vectors (
    body_id bigint PRIMARY KEY,
    vec     bytea NOT NULL
);

-- One row: the model of the vectors and the high-water mark (every body
-- up to mark has its vector, or no text). Body ids are never given
-- again.
CREATE TABLE IF NOT EXISTS vector_state (
    id    integer PRIMARY KEY CHECK (id = 1),
    model text NOT NULL DEFAULT '',
    mark  bigint NOT NULL DEFAULT 0
);
INSERT INTO vector_state (id) VALUES (1) ON CONFLICT DO NOTHING;

-- A body's vector goes with the body, and when its text changes
-- (redacted) the body is embedded again.
CREATE OR REPLACE FUNCTION loom_vectors_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM vectors WHERE body_id IN (SELECT id FROM gone);
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS bodies_vectors_ad ON bodies;
CREATE TRIGGER bodies_vectors_ad AFTER DELETE ON bodies
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION loom_vectors_gone();

CREATE OR REPLACE FUNCTION loom_vectors_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM vectors WHERE body_id = OLD.id;
    UPDATE vector_state SET mark = OLD.id - 1 WHERE mark >= OLD.id;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS bodies_vectors_au ON bodies;
CREATE TRIGGER bodies_vectors_au AFTER UPDATE OF content ON bodies
    FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content) EXECUTE FUNCTION loom_vectors_changed();
