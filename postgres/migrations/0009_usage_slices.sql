-- Usage reports read a roll-up instead of every message, as in SQLite
-- (docs/usage.md, "How reports stay fast"): usage_slices holds what
-- Store.UsageSlices returns, per session, with the session's user,
-- surface, project and trash state beside; writes only mark what
-- changed, and the next report brings the roll-up up to date in one
-- transaction before it reads it.
CREATE TABLE usage_slices (
    session_id         text COLLATE "C" NOT NULL,
    hour               text COLLATE "C" NOT NULL,
    quarter            integer NOT NULL,
    provider           text NOT NULL,
    model              text NOT NULL,
    long_context       boolean NOT NULL,
    user_id            text NOT NULL,
    surface            text NOT NULL,
    project_id         text NOT NULL,
    project_name       text NOT NULL,
    live               boolean NOT NULL,
    first_at           timestamptz NOT NULL,
    last_at            timestamptz NOT NULL,
    messages           bigint NOT NULL,
    input_tokens       bigint NOT NULL,
    output_tokens      bigint NOT NULL,
    reasoning_tokens   bigint NOT NULL,
    cache_read_tokens  bigint NOT NULL,
    cache_write_tokens bigint NOT NULL,
    cost_usd           double precision NOT NULL,
    api_calls          bigint NOT NULL,
    compactions        bigint NOT NULL,
    -- In the order a report groups and reads them.
    PRIMARY KEY (user_id, live, hour, quarter, surface, project_id, provider, model, long_context, session_id)
);

-- A session's slices, for the triggers and the catch-up.
CREATE UNIQUE INDEX usage_slices_session ON usage_slices (session_id, hour, quarter, provider, model, long_context);

-- Stored rows with usage not yet in the roll-up.
CREATE TABLE usage_pending (
    store_id text COLLATE "C" NOT NULL,
    seq      bigint NOT NULL,
    PRIMARY KEY (store_id, seq)
);

-- Sessions whose slices are summed again whole. A mark is never merged
-- with an earlier one: a report that read the earlier one before this
-- change must not take this one away.
CREATE TABLE usage_stale (
    mark       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id text COLLATE "C" NOT NULL
);

CREATE INDEX usage_stale_session ON usage_stale (session_id);

-- Every session there is, summed once at the first report.
INSERT INTO usage_stale (session_id) SELECT id FROM sessions;

-- A row stored under a session this transaction marked stale needs no
-- mark: the session is summed whole, and no report can take the mark
-- before this transaction commits (unlike a mark already committed, which
-- a report running now may be summing without this row). So an import,
-- whose sessions are new, marks each session once, not each row.
CREATE FUNCTION usage_messages_ai() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
BEGIN
    INSERT INTO usage_pending (store_id, seq)
    SELECT f.session_id, f.seq FROM fresh f
    WHERE (f.input_tokens <> 0 OR f.output_tokens <> 0 OR f.cache_read_tokens <> 0 OR f.cache_write_tokens <> 0 OR f.cost_usd <> 0)
      AND NOT EXISTS (SELECT 1 FROM usage_stale st WHERE st.session_id = f.session_id AND st.xmin = xid(pg_current_xact_id()))
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER usage_messages_ai AFTER INSERT ON messages
    REFERENCING NEW TABLE AS fresh
    FOR EACH STATEMENT EXECUTE FUNCTION usage_messages_ai();

-- A row without usage was never counted: once it has some, it is
-- pending like a new one. A counted row that changes makes its readers
-- stale. (A row whose store changed is its spans' change.) Row by row,
-- and only when what a slice sums changed: an update of a part's body
-- or of a message's error costs nothing here.
CREATE FUNCTION usage_messages_au() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
BEGIN
    IF OLD.input_tokens = 0 AND OLD.output_tokens = 0 AND OLD.cache_read_tokens = 0
        AND OLD.cache_write_tokens = 0 AND OLD.cost_usd = 0 THEN
        INSERT INTO usage_pending (store_id, seq) VALUES (NEW.session_id, NEW.seq) ON CONFLICT DO NOTHING;
    ELSE
        INSERT INTO usage_stale (session_id)
        SELECT DISTINCT sp.session_id FROM spans sp
        WHERE sp.store_id = OLD.session_id AND OLD.seq BETWEEN sp.first_seq AND sp.last_seq;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER usage_messages_au AFTER UPDATE OF input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
    cache_write_tokens, cost_usd, api_calls, compactions, created_at, model, provider, turn ON messages
    FOR EACH ROW
    WHEN ((OLD.input_tokens, OLD.output_tokens, OLD.reasoning_tokens, OLD.cache_read_tokens, OLD.cache_write_tokens, OLD.cost_usd,
           OLD.api_calls, OLD.compactions, OLD.created_at, OLD.model, OLD.provider, OLD.turn)
          IS DISTINCT FROM (NEW.input_tokens, NEW.output_tokens, NEW.reasoning_tokens, NEW.cache_read_tokens, NEW.cache_write_tokens,
           NEW.cost_usd, NEW.api_calls, NEW.compactions, NEW.created_at, NEW.model, NEW.provider, NEW.turn))
    EXECUTE FUNCTION usage_messages_au();

CREATE FUNCTION usage_messages_ad() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
BEGIN
    INSERT INTO usage_stale (session_id)
    SELECT DISTINCT sp.session_id
    FROM gone o JOIN spans sp ON sp.store_id = o.session_id AND o.seq BETWEEN sp.first_seq AND sp.last_seq
    WHERE o.input_tokens <> 0 OR o.output_tokens <> 0 OR o.cache_read_tokens <> 0 OR o.cache_write_tokens <> 0 OR o.cost_usd <> 0;
    RETURN NULL;
END
$$;

CREATE TRIGGER usage_messages_ad AFTER DELETE ON messages
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION usage_messages_ad();

CREATE FUNCTION usage_spans_ai() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
BEGIN
    INSERT INTO usage_stale (session_id) SELECT DISTINCT session_id FROM fresh;
    RETURN NULL;
END
$$;

CREATE TRIGGER usage_spans_ai AFTER INSERT ON spans
    REFERENCING NEW TABLE AS fresh
    FOR EACH STATEMENT EXECUTE FUNCTION usage_spans_ai();

CREATE FUNCTION usage_spans_ad() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
BEGIN
    INSERT INTO usage_stale (session_id) SELECT DISTINCT session_id FROM gone;
    RETURN NULL;
END
$$;

CREATE TRIGGER usage_spans_ad AFTER DELETE ON spans
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION usage_spans_ad();

CREATE FUNCTION usage_spans_au() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
BEGIN
    INSERT INTO usage_stale (session_id)
    SELECT session_id FROM gone UNION SELECT session_id FROM fresh;
    RETURN NULL;
END
$$;

CREATE TRIGGER usage_spans_au AFTER UPDATE ON spans
    REFERENCING OLD TABLE AS gone NEW TABLE AS fresh
    FOR EACH STATEMENT EXECUTE FUNCTION usage_spans_au();

-- What a report groups by and filters on follows the session at once;
-- which messages a fork leaves out makes it stale. Row by row, and only
-- when one of those changed: the update of a session's counters at
-- every append costs nothing here.
CREATE FUNCTION usage_sessions_au() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
BEGIN
    UPDATE usage_slices SET user_id = NEW.user_id, surface = NEW.surface, project_id = NEW.project_id,
        project_name = NEW.project_name, live = NEW.deleted_at IS NULL
    WHERE session_id = NEW.id;
    IF (OLD.kind, OLD.fork_turn) IS DISTINCT FROM (NEW.kind, NEW.fork_turn) THEN
        INSERT INTO usage_stale (session_id) VALUES (NEW.id);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER usage_sessions_au AFTER UPDATE OF user_id, surface, project_id, project_name, deleted_at, kind, fork_turn ON sessions
    FOR EACH ROW
    WHEN ((OLD.user_id, OLD.surface, OLD.project_id, OLD.project_name, OLD.deleted_at IS NULL, OLD.kind, OLD.fork_turn)
          IS DISTINCT FROM (NEW.user_id, NEW.surface, NEW.project_id, NEW.project_name, NEW.deleted_at IS NULL, NEW.kind, NEW.fork_turn))
    EXECUTE FUNCTION usage_sessions_au();

CREATE FUNCTION usage_sessions_ad() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
BEGIN
    DELETE FROM usage_slices WHERE session_id IN (SELECT id FROM gone);
    RETURN NULL;
END
$$;

CREATE TRIGGER usage_sessions_ad AFTER DELETE ON sessions
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION usage_sessions_ad();
