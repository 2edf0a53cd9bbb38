-- Cache writes kept for an hour, counted apart, as in SQLite: Anthropic
-- bills a token written to its 1-hour cache at twice the input price,
-- one written for five minutes at 1.25 times. cache_write_1h_tokens is
-- the part of cache_write_tokens written for an hour; rows stored before
-- it are 0, all five-minute, as they were priced. The roll-up sums it
-- too, and the view, the copy of an inherited row and the trigger that
-- marks a changed row take it in.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS cache_write_1h_tokens bigint NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS cache_write_1h_tokens bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_slices ADD COLUMN IF NOT EXISTS cache_write_1h_tokens bigint NOT NULL DEFAULT 0;

CREATE OR REPLACE VIEW session_messages AS
SELECT sp.session_id AS session_id, m.seq, m.id, m.role, m.turn, m.body_id, m.model, m.provider,
    m.input_tokens, m.output_tokens, m.reasoning_tokens, m.cache_read_tokens,
    m.cache_write_tokens, m.cost_usd, m.api_calls, m.compactions, m.error,
    m.created_at, m.completed_at, m.session_id AS store_id, m.cache_write_1h_tokens
FROM messages m JOIN spans sp ON sp.store_id = m.session_id AND m.seq BETWEEN sp.first_seq AND sp.last_seq;

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
            input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens,
            cost_usd, api_calls, compactions, error, created_at, completed_at)
        SELECT r.own, x.seq, x.id, x.role, x.turn, x.body_id, x.model, x.provider,
            x.input_tokens, x.output_tokens, x.reasoning_tokens, x.cache_read_tokens, x.cache_write_tokens, x.cache_write_1h_tokens,
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

DROP TRIGGER IF EXISTS usage_messages_au ON messages;
CREATE TRIGGER usage_messages_au AFTER UPDATE OF input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
    cache_write_tokens, cache_write_1h_tokens, cost_usd, api_calls, compactions, created_at, model, provider, turn ON messages
    FOR EACH ROW
    WHEN ((OLD.input_tokens, OLD.output_tokens, OLD.reasoning_tokens, OLD.cache_read_tokens, OLD.cache_write_tokens,
           OLD.cache_write_1h_tokens, OLD.cost_usd, OLD.api_calls, OLD.compactions, OLD.created_at, OLD.model, OLD.provider, OLD.turn)
          IS DISTINCT FROM (NEW.input_tokens, NEW.output_tokens, NEW.reasoning_tokens, NEW.cache_read_tokens, NEW.cache_write_tokens,
           NEW.cache_write_1h_tokens, NEW.cost_usd, NEW.api_calls, NEW.compactions, NEW.created_at, NEW.model, NEW.provider, NEW.turn))
    EXECUTE FUNCTION usage_messages_au();
