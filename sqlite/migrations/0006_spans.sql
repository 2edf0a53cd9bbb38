-- Forks and rewinds that copy nothing. A session's messages are read
-- through its spans: messages first_seq..last_seq of session_id are the
-- rows with those seq stored under store_id (messages.session_id). A
-- session that was never forked nor rewound has one span, 1 to the end
-- (9223372036854775807), stored under its own id. A fork of it at seq N
-- reads 1..N from its parent's rows and stores its own, N+1 on, under
-- its own id; a rewound session reads what it keeps from the rows it
-- wrote before and stores what follows under a new id.
CREATE TABLE spans (
    session_id TEXT NOT NULL,
    first_seq  INTEGER NOT NULL,
    last_seq   INTEGER NOT NULL,
    store_id   TEXT NOT NULL,
    PRIMARY KEY (session_id, first_seq)
) STRICT, WITHOUT ROWID;

-- Which sessions read a stored row: search, deletes.
CREATE INDEX spans_store ON spans (store_id, first_seq, last_seq, session_id);

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
SELECT sp.session_id AS session_id, m.seq AS seq, m.id AS id, m.role AS role, m.turn AS turn,
    m.body_id AS body_id, m.model AS model, m.provider AS provider,
    m.input_tokens AS input_tokens, m.output_tokens AS output_tokens,
    m.reasoning_tokens AS reasoning_tokens, m.cache_read_tokens AS cache_read_tokens,
    m.cache_write_tokens AS cache_write_tokens, m.cost_usd AS cost_usd,
    m.api_calls AS api_calls, m.compactions AS compactions, m.error AS error,
    m.created_at AS created_at, m.completed_at AS completed_at, m.session_id AS store_id
FROM messages m JOIN spans sp ON sp.store_id = m.session_id AND m.seq BETWEEN sp.first_seq AND sp.last_seq;

-- A new session reads its own rows. Rows already stored under its id are
-- a purged session's that others still read (its id came back, by an
-- import of its export): they move to a name of their own first.
CREATE TRIGGER sessions_ai AFTER INSERT ON sessions
BEGIN
    UPDATE messages SET session_id = (SELECT min(session_id) FROM spans WHERE store_id = new.id) || '/' || new.id
    WHERE session_id = new.id AND EXISTS (SELECT 1 FROM spans WHERE store_id = new.id);
    UPDATE spans SET store_id = (SELECT min(session_id) FROM spans WHERE store_id = new.id) || '/' || new.id
    WHERE store_id = new.id;
    INSERT INTO spans (session_id, first_seq, last_seq, store_id) VALUES (new.id, 1, 9223372036854775807, new.id);
END;

-- Deleting a session row deletes its spans, and so the rows no other
-- session reads (with their bodies and search entries), and its lock.
DROP TRIGGER sessions_ad;
CREATE TRIGGER sessions_ad AFTER DELETE ON sessions
BEGIN
    DELETE FROM spans WHERE session_id = old.id;
    DELETE FROM locks WHERE session_id = old.id;
END;

-- The spans of a session that is gone: the rows they name that no other
-- session reads go too. A span that another covers whole (a fork's, read
-- from a parent that reads them all) names none, and costs one seek.
-- (A live session's spans are rewritten by loom, which never leaves rows
-- unread.)
CREATE TRIGGER spans_ad AFTER DELETE ON spans
WHEN NOT EXISTS (SELECT 1 FROM sessions WHERE id = old.session_id)
    AND NOT EXISTS (SELECT 1 FROM spans o WHERE o.store_id = old.store_id
        AND o.first_seq <= old.first_seq AND o.last_seq >= old.last_seq)
BEGIN
    DELETE FROM messages
    WHERE session_id = old.store_id AND seq BETWEEN old.first_seq AND old.last_seq
      AND NOT EXISTS (SELECT 1 FROM spans o WHERE o.store_id = old.store_id
          AND o.first_seq <= messages.seq AND o.last_seq >= messages.seq);
END;

-- Rows deleted by hand that another session inherits (a fork reading its
-- parent's): that session gets its own copy of the span first, stored
-- where it stores its own rows, so deleting a session's messages never
-- takes another's history.
CREATE TRIGGER messages_bd BEFORE DELETE ON messages
WHEN EXISTS (SELECT 1 FROM spans sp WHERE sp.store_id = old.session_id
    AND sp.first_seq <= old.seq AND sp.last_seq >= old.seq
    AND sp.store_id <> (SELECT o.store_id FROM spans o WHERE o.session_id = sp.session_id ORDER BY o.first_seq DESC LIMIT 1))
BEGIN
    INSERT INTO messages (session_id, seq, id, role, turn, body_id, model, provider,
        input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
        cost_usd, api_calls, compactions, error, created_at, completed_at)
    SELECT (SELECT o.store_id FROM spans o WHERE o.session_id = sp.session_id ORDER BY o.first_seq DESC LIMIT 1),
        m.seq, m.id, m.role, m.turn, m.body_id, m.model, m.provider,
        m.input_tokens, m.output_tokens, m.reasoning_tokens, m.cache_read_tokens, m.cache_write_tokens,
        m.cost_usd, m.api_calls, m.compactions, m.error, m.created_at, m.completed_at
    FROM spans sp CROSS JOIN messages m ON m.session_id = sp.store_id AND m.seq BETWEEN sp.first_seq AND sp.last_seq
    WHERE sp.store_id = old.session_id AND sp.first_seq <= old.seq AND sp.last_seq >= old.seq
      AND sp.store_id <> (SELECT o.store_id FROM spans o WHERE o.session_id = sp.session_id ORDER BY o.first_seq DESC LIMIT 1);
    UPDATE spans SET store_id = (SELECT o.store_id FROM spans o WHERE o.session_id = spans.session_id ORDER BY o.first_seq DESC LIMIT 1)
    WHERE store_id = old.session_id AND first_seq <= old.seq AND last_seq >= old.seq
      AND store_id <> (SELECT o.store_id FROM spans o WHERE o.session_id = spans.session_id ORDER BY o.first_seq DESC LIMIT 1);
END;
