-- The search vector becomes a plain column kept by triggers instead of a
-- generated one, so that a bulk import may pass vectors it had computed
-- on other connections in parallel: computing them (PostgreSQL's parser
-- and stemmer) is most of an import's work, and a generated column
-- computes it on the importing connection alone, one row at a time.
-- Dropping the expression keeps every stored vector; nothing is rewritten.
ALTER TABLE bodies ALTER COLUMN search DROP EXPRESSION;

-- bodies_search computes a body's search vector, with the expression the
-- generated column had. It keeps the search_path it was created with, so
-- loom_search_text is found whoever writes the row.
CREATE FUNCTION bodies_search() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
BEGIN
    NEW.search := to_tsvector('english'::regconfig, loom_search_text(NEW.content));
    RETURN NEW;
END
$$;

-- A body inserted without a vector gets one; loom's import inserts its
-- bodies with the vector already computed. Any change of the content or
-- of the vector computes it again from the content, so the index stays in
-- step with the text whoever writes it.
CREATE TRIGGER bodies_search_insert BEFORE INSERT ON bodies
    FOR EACH ROW WHEN (NEW.search IS NULL) EXECUTE FUNCTION bodies_search();
CREATE TRIGGER bodies_search_update BEFORE UPDATE OF content, search ON bodies
    FOR EACH ROW EXECUTE FUNCTION bodies_search();
