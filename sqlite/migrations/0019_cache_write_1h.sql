-- Cache writes kept for an hour, counted apart: Anthropic bills a token
-- written to its 1-hour cache at twice the input price, one written for
-- five minutes at 1.25 times. cache_write_1h_tokens is the part of
-- cache_write_tokens written for an hour; rows stored before it are 0,
-- all five-minute, as they were priced. The roll-up sums it too, and
-- the view, the copy of an inherited row and the trigger that marks a
-- changed row take it in.
ALTER TABLE messages ADD COLUMN cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_slices ADD COLUMN cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0;

DROP VIEW IF EXISTS session_messages;
CREATE VIEW session_messages AS
SELECT sp.session_id AS session_id, m.seq AS seq, m.id AS id, m.role AS role, m.turn AS turn,
    m.body_id AS body_id, m.model AS model, m.provider AS provider,
    m.input_tokens AS input_tokens, m.output_tokens AS output_tokens,
    m.reasoning_tokens AS reasoning_tokens, m.cache_read_tokens AS cache_read_tokens,
    m.cache_write_tokens AS cache_write_tokens, m.cost_usd AS cost_usd,
    m.api_calls AS api_calls, m.compactions AS compactions, m.error AS error,
    m.created_at AS created_at, m.completed_at AS completed_at, m.session_id AS store_id,
    m.cache_write_1h_tokens AS cache_write_1h_tokens
FROM messages m JOIN spans sp ON sp.store_id = m.session_id AND m.seq BETWEEN sp.first_seq AND sp.last_seq;

DROP TRIGGER IF EXISTS messages_bd;
CREATE TRIGGER messages_bd BEFORE DELETE ON messages
WHEN EXISTS (SELECT 1 FROM spans sp WHERE sp.store_id = old.session_id
    AND sp.first_seq <= old.seq AND sp.last_seq >= old.seq
    AND sp.store_id <> (SELECT o.store_id FROM spans o WHERE o.session_id = sp.session_id ORDER BY o.first_seq DESC LIMIT 1))
BEGIN
    INSERT INTO messages (session_id, seq, id, role, turn, body_id, model, provider,
        input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens,
        cost_usd, api_calls, compactions, error, created_at, completed_at)
    SELECT (SELECT o.store_id FROM spans o WHERE o.session_id = sp.session_id ORDER BY o.first_seq DESC LIMIT 1),
        m.seq, m.id, m.role, m.turn, m.body_id, m.model, m.provider,
        m.input_tokens, m.output_tokens, m.reasoning_tokens, m.cache_read_tokens, m.cache_write_tokens, m.cache_write_1h_tokens,
        m.cost_usd, m.api_calls, m.compactions, m.error, m.created_at, m.completed_at
    FROM spans sp CROSS JOIN messages m ON m.session_id = sp.store_id AND m.seq BETWEEN sp.first_seq AND sp.last_seq
    WHERE sp.store_id = old.session_id AND sp.first_seq <= old.seq AND sp.last_seq >= old.seq
      AND sp.store_id <> (SELECT o.store_id FROM spans o WHERE o.session_id = sp.session_id ORDER BY o.first_seq DESC LIMIT 1);
    UPDATE spans SET store_id = (SELECT o.store_id FROM spans o WHERE o.session_id = spans.session_id ORDER BY o.first_seq DESC LIMIT 1)
    WHERE store_id = old.session_id AND first_seq <= old.seq AND last_seq >= old.seq
      AND store_id <> (SELECT o.store_id FROM spans o WHERE o.session_id = spans.session_id ORDER BY o.first_seq DESC LIMIT 1);
END;

DROP TRIGGER IF EXISTS usage_messages_au;
CREATE TRIGGER usage_messages_au AFTER UPDATE OF input_tokens, output_tokens, reasoning_tokens,
    cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, cost_usd, api_calls, compactions, created_at, model, provider, turn ON messages
BEGIN
    INSERT OR IGNORE INTO usage_pending (store_id, seq)
    SELECT new.session_id, new.seq
    WHERE old.input_tokens = 0 AND old.output_tokens = 0 AND old.cache_read_tokens = 0
        AND old.cache_write_tokens = 0 AND old.cost_usd = 0;
    INSERT OR IGNORE INTO usage_stale (session_id)
    SELECT sp.session_id FROM spans sp
    WHERE sp.store_id = old.session_id AND old.seq BETWEEN sp.first_seq AND sp.last_seq
        AND (old.input_tokens <> 0 OR old.output_tokens <> 0 OR old.cache_read_tokens <> 0
            OR old.cache_write_tokens <> 0 OR old.cost_usd <> 0);
END;
