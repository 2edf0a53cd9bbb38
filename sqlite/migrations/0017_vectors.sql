-- Vectors for search by meaning (docs/search.md, "Ranking by meaning"):
-- one per body with text, made by the model vector_state names. They are
-- derived data: never synced or exported, all deleted when the model
-- changes, and made again in the background.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.
CREATE TABLE IF NOT EXISTS vectors (
    body_id INTEGER PRIMARY KEY,
    vec     BLOB NOT NULL
) STRICT;

-- One row: the model of the vectors, the high-water mark (every body up
-- to mark has its vector, or no text), and the process that embeds.
CREATE TABLE IF NOT EXISTS vector_state (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    model       TEXT NOT NULL DEFAULT '',
    mark        INTEGER NOT NULL DEFAULT 0,
    owner       TEXT NOT NULL DEFAULT '',
    owner_pid   INTEGER NOT NULL DEFAULT 0,
    owner_host  TEXT NOT NULL DEFAULT '',
    owner_until TEXT NOT NULL DEFAULT ''
) STRICT;
INSERT OR IGNORE INTO vector_state (id) VALUES (1);

-- A body's vector goes with the body. A body id can be given again only
-- when the highest one went: the mark then steps back below it.
CREATE TRIGGER IF NOT EXISTS bodies_ad_vectors AFTER DELETE ON bodies
BEGIN
    DELETE FROM vectors WHERE body_id = old.id;
    UPDATE vector_state SET mark = old.id - 1
    WHERE mark >= old.id AND old.id > (SELECT coalesce(max(id), 0) FROM bodies);
END;

-- A body whose text changed (redacted) is embedded again.
CREATE TRIGGER IF NOT EXISTS bodies_au_vectors AFTER UPDATE OF content ON bodies
BEGIN
    DELETE FROM vectors WHERE body_id = old.id;
    UPDATE vector_state SET mark = old.id - 1 WHERE mark >= old.id;
END;
