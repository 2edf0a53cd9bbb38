-- Forks and rewinds that copy nothing, as in SQLite. A session's
-- messages are read through its spans: messages first_seq..last_seq of
-- session_id are the rows with those seq stored under store_id
-- (messages.session_id). A session that was never forked nor rewound
-- has one span, 1 to the end (9223372036854775807), stored under its own
-- id. A fork of it at seq N reads 1..N from its parent's rows and stores
-- its own, N+1 on, under its own id; a rewound session reads what it
-- keeps from the rows it wrote before and stores what follows under a
-- new id.
CREATE TABLE spans (
    session_id text COLLATE "C" NOT NULL,
    first_seq  bigint NOT NULL,
    last_seq   bigint NOT NULL,
    store_id   text COLLATE "C" NOT NULL,
    PRIMARY KEY (session_id, first_seq)
);

-- Which sessions read a stored row: search, deletes.
CREATE INDEX spans_store ON spans (store_id, first_seq) INCLUDE (last_seq, session_id);

-- Every session made before this migration holds its own rows, forks
-- their full copies too.
INSERT INTO spans (session_id, first_seq, last_seq, store_id)
SELECT id, 1, 9223372036854775807, id FROM sessions;

-- The latest summary at or before a seq in one seek: a fork and a rewind
-- need it without reading the messages before.
CREATE INDEX messages_summary ON messages (session_id, seq) WHERE role = 'summary';

-- Every session's messages as loom reads them: session_id is the session
-- that reads the row, store_id the one it is stored under.
CREATE VIEW session_messages AS
SELECT sp.session_id AS session_id, m.seq, m.id, m.role, m.turn, m.body_id, m.model, m.provider,
    m.input_tokens, m.output_tokens, m.reasoning_tokens, m.cache_read_tokens,
    m.cache_write_tokens, m.cost_usd, m.api_calls, m.compactions, m.error,
    m.created_at, m.completed_at, m.session_id AS store_id
FROM messages m JOIN spans sp ON sp.store_id = m.session_id AND m.seq BETWEEN sp.first_seq AND sp.last_seq;

-- A new session reads its own rows. Rows already stored under its id are
-- a purged session's that others still read (its id came back, by an
-- import of its export): they move to a name of their own first.
CREATE FUNCTION sessions_ai() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
DECLARE
    r record;
    moved text;
BEGIN
    FOR r IN SELECT f.id FROM fresh f WHERE EXISTS (SELECT 1 FROM spans WHERE store_id = f.id) LOOP
        moved := (SELECT min(session_id) FROM spans WHERE store_id = r.id) || '/' || r.id;
        UPDATE messages SET session_id = moved WHERE session_id = r.id;
        UPDATE spans SET store_id = moved WHERE store_id = r.id;
    END LOOP;
    INSERT INTO spans (session_id, first_seq, last_seq, store_id)
    SELECT id, 1, 9223372036854775807, id FROM fresh;
    RETURN NULL;
END
$$;

CREATE TRIGGER sessions_ai AFTER INSERT ON sessions
    REFERENCING NEW TABLE AS fresh
    FOR EACH STATEMENT EXECUTE FUNCTION sessions_ai();

-- Deleting a session row deletes its spans, and so the rows no other
-- session reads (with their bodies and search entries), and its lock.
CREATE OR REPLACE FUNCTION sessions_ad() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
BEGIN
    DELETE FROM spans WHERE session_id IN (SELECT id FROM gone);
    DELETE FROM locks WHERE session_id IN (SELECT id FROM gone);
    RETURN NULL;
END
$$;

-- The spans of a session that is gone: the rows they name that no other
-- session reads go too. A span that another covers whole (a fork's, read
-- from a parent that reads them all) names none, and costs one seek.
-- (A live session's spans are rewritten by loom, which never leaves rows
-- unread.)
CREATE FUNCTION spans_ad() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
BEGIN
    DELETE FROM messages m USING gone g
    WHERE m.session_id = g.store_id AND m.seq BETWEEN g.first_seq AND g.last_seq
      AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = g.session_id)
      AND NOT EXISTS (SELECT 1 FROM spans o WHERE o.store_id = g.store_id
          AND o.first_seq <= g.first_seq AND o.last_seq >= g.last_seq)
      AND NOT EXISTS (SELECT 1 FROM spans o WHERE o.store_id = m.session_id
          AND o.first_seq <= m.seq AND o.last_seq >= m.seq);
    RETURN NULL;
END
$$;

CREATE TRIGGER spans_ad AFTER DELETE ON spans
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION spans_ad();

-- Rows deleted by hand that another session inherits (a fork reading its
-- parent's): that session gets its own copy of the span first, stored
-- where it stores its own rows, so deleting a session's messages never
-- takes another's history. Then a body goes when the last message using
-- it has gone.
CREATE OR REPLACE FUNCTION messages_ad() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT DISTINCT sp.session_id, sp.first_seq, sp.last_seq, sp.store_id, own.store_id AS own
        FROM gone g
        JOIN spans sp ON sp.store_id = g.session_id AND g.seq BETWEEN sp.first_seq AND sp.last_seq
        CROSS JOIN LATERAL (SELECT o.store_id FROM spans o WHERE o.session_id = sp.session_id
            ORDER BY o.first_seq DESC LIMIT 1) own
        WHERE sp.store_id <> own.store_id
    LOOP
        INSERT INTO messages (session_id, seq, id, role, turn, body_id, model, provider,
            input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
            cost_usd, api_calls, compactions, error, created_at, completed_at)
        SELECT r.own, x.seq, x.id, x.role, x.turn, x.body_id, x.model, x.provider,
            x.input_tokens, x.output_tokens, x.reasoning_tokens, x.cache_read_tokens, x.cache_write_tokens,
            x.cost_usd, x.api_calls, x.compactions, x.error, x.created_at, x.completed_at
        FROM (SELECT * FROM gone WHERE session_id = r.store_id AND seq BETWEEN r.first_seq AND r.last_seq
            UNION ALL
            SELECT * FROM messages WHERE session_id = r.store_id AND seq BETWEEN r.first_seq AND r.last_seq) x;
        UPDATE spans SET store_id = r.own WHERE session_id = r.session_id AND first_seq = r.first_seq;
    END LOOP;
    DELETE FROM bodies b
    WHERE b.id IN (SELECT DISTINCT body_id FROM gone)
      AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.body_id = b.id);
    RETURN NULL;
END
$$;
