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
-- stale. (A row whose store changed is its spans' change.)
CREATE FUNCTION usage_messages_au() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
BEGIN
    INSERT INTO usage_pending (store_id, seq)
    SELECT n.session_id, n.seq FROM fresh n JOIN gone o ON o.session_id = n.session_id AND o.seq = n.seq
    WHERE o.input_tokens = 0 AND o.output_tokens = 0 AND o.cache_read_tokens = 0 AND o.cache_write_tokens = 0 AND o.cost_usd = 0
      AND (n.input_tokens <> 0 OR n.output_tokens <> 0 OR n.cache_read_tokens <> 0 OR n.cache_write_tokens <> 0 OR n.cost_usd <> 0)
    ON CONFLICT DO NOTHING;
    INSERT INTO usage_stale (session_id)
    SELECT DISTINCT sp.session_id
    FROM gone o JOIN fresh n ON n.session_id = o.session_id AND n.seq = o.seq
    JOIN spans sp ON sp.store_id = o.session_id AND o.seq BETWEEN sp.first_seq AND sp.last_seq
    WHERE (o.input_tokens <> 0 OR o.output_tokens <> 0 OR o.cache_read_tokens <> 0 OR o.cache_write_tokens <> 0 OR o.cost_usd <> 0)
      AND (o.input_tokens, o.output_tokens, o.reasoning_tokens, o.cache_read_tokens, o.cache_write_tokens, o.cost_usd,
           o.api_calls, o.compactions, o.created_at, o.model, o.provider, o.turn)
          IS DISTINCT FROM (n.input_tokens, n.output_tokens, n.reasoning_tokens, n.cache_read_tokens, n.cache_write_tokens, n.cost_usd,
           n.api_calls, n.compactions, n.created_at, n.model, n.provider, n.turn);
    RETURN NULL;
END
$$;

CREATE TRIGGER usage_messages_au AFTER UPDATE ON messages
    REFERENCING OLD TABLE AS gone NEW TABLE AS fresh
    FOR EACH STATEMENT EXECUTE FUNCTION usage_messages_au();

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
-- which messages a fork leaves out makes it stale.
CREATE FUNCTION usage_sessions_au() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
    AS $$
BEGIN
    UPDATE usage_slices u SET user_id = n.user_id, surface = n.surface, project_id = n.project_id,
        project_name = n.project_name, live = n.deleted_at IS NULL
    FROM gone o JOIN fresh n ON n.id = o.id
    WHERE u.session_id = n.id
      AND (o.user_id, o.surface, o.project_id, o.project_name, o.deleted_at IS NULL)
          IS DISTINCT FROM (n.user_id, n.surface, n.project_id, n.project_name, n.deleted_at IS NULL);
    INSERT INTO usage_stale (session_id)
    SELECT n.id FROM gone o JOIN fresh n ON n.id = o.id
    WHERE (o.kind, o.fork_turn) IS DISTINCT FROM (n.kind, n.fork_turn);
    RETURN NULL;
END
$$;

CREATE TRIGGER usage_sessions_au AFTER UPDATE ON sessions
    REFERENCING OLD TABLE AS gone NEW TABLE AS fresh
    FOR EACH STATEMENT EXECUTE FUNCTION usage_sessions_au();

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
