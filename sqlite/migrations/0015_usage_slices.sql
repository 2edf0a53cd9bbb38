-- Usage reports read a roll-up instead of every message (docs/usage.md,
-- "How reports stay fast"). usage_slices holds what Store.UsageSlices
-- returns, per session: the usage of the messages each session reads
-- (through its spans, a fork's inherited history left out), summed per
-- quarter hour (UTC), provider, model and long-context flag, with the
-- session's user, surface, project and trash state copied beside, so a
-- report groups this one table. Writes only mark what changed, cheaply,
-- in usage_pending and usage_stale; the next report (Store.UsageSlices)
-- brings the roll-up up to date in one transaction before it reads it.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.
CREATE TABLE IF NOT EXISTS usage_slices (
    session_id         TEXT NOT NULL,
    hour               TEXT NOT NULL,
    quarter            INTEGER NOT NULL,
    provider           TEXT NOT NULL,
    model              TEXT NOT NULL,
    long_context       INTEGER NOT NULL,
    user_id            TEXT NOT NULL,
    surface            TEXT NOT NULL,
    project_id         TEXT NOT NULL,
    project_name       TEXT NOT NULL,
    live               INTEGER NOT NULL,
    first_at           TEXT NOT NULL,
    last_at            TEXT NOT NULL,
    messages           INTEGER NOT NULL,
    input_tokens       INTEGER NOT NULL,
    output_tokens      INTEGER NOT NULL,
    reasoning_tokens   INTEGER NOT NULL,
    cache_read_tokens  INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    cost_usd           REAL NOT NULL,
    api_calls          INTEGER NOT NULL,
    compactions        INTEGER NOT NULL,
    -- In the order a report groups and reads them.
    PRIMARY KEY (user_id, live, hour, quarter, surface, project_id, provider, model, long_context, session_id)
) STRICT, WITHOUT ROWID;

-- A session's slices, for the triggers and the catch-up.
CREATE UNIQUE INDEX IF NOT EXISTS usage_slices_session ON usage_slices (session_id, hour, quarter, provider, model, long_context);

-- Stored rows with usage not yet in the roll-up: a row appended or
-- imported, or one whose usage was set after it was stored without.
CREATE TABLE IF NOT EXISTS usage_pending (
    store_id TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    PRIMARY KEY (store_id, seq)
) STRICT, WITHOUT ROWID;

-- Sessions whose slices are summed again whole: new ones, those whose
-- spans changed (forks, rewinds, purges, moved rows), and the readers
-- of a counted row that changed or went.
CREATE TABLE IF NOT EXISTS usage_stale (
    session_id TEXT PRIMARY KEY
) STRICT, WITHOUT ROWID;

-- Every session there is, summed once at the first report.
INSERT OR IGNORE INTO usage_stale (session_id) SELECT id FROM sessions;

-- A row stored under a stale session's own id needs no mark: the
-- session is summed whole, and nothing else reads a row just stored
-- there (a fork reads its parent's rows up to where it was made). So an
-- import, whose sessions are new, marks each session once, not each row.
CREATE TRIGGER IF NOT EXISTS usage_messages_ai AFTER INSERT ON messages
WHEN (new.input_tokens <> 0 OR new.output_tokens <> 0 OR new.cache_read_tokens <> 0
    OR new.cache_write_tokens <> 0 OR new.cost_usd <> 0)
    AND NOT EXISTS (SELECT 1 FROM usage_stale WHERE session_id = new.session_id)
BEGIN
    INSERT OR IGNORE INTO usage_pending (store_id, seq) VALUES (new.session_id, new.seq);
END;

-- A row without usage was never counted: once it has some, it is
-- pending like a new one. A counted row that changes makes its readers
-- stale.
CREATE TRIGGER IF NOT EXISTS usage_messages_au AFTER UPDATE OF input_tokens, output_tokens, reasoning_tokens,
    cache_read_tokens, cache_write_tokens, cost_usd, api_calls, compactions, created_at, model, provider, turn ON messages
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

CREATE TRIGGER IF NOT EXISTS usage_messages_ad AFTER DELETE ON messages
WHEN old.input_tokens <> 0 OR old.output_tokens <> 0 OR old.cache_read_tokens <> 0
    OR old.cache_write_tokens <> 0 OR old.cost_usd <> 0
BEGIN
    INSERT OR IGNORE INTO usage_stale (session_id)
    SELECT sp.session_id FROM spans sp
    WHERE sp.store_id = old.session_id AND old.seq BETWEEN sp.first_seq AND sp.last_seq;
END;

CREATE TRIGGER IF NOT EXISTS usage_spans_ai AFTER INSERT ON spans
BEGIN
    INSERT OR IGNORE INTO usage_stale (session_id) VALUES (new.session_id);
END;

CREATE TRIGGER IF NOT EXISTS usage_spans_au AFTER UPDATE ON spans
BEGIN
    INSERT OR IGNORE INTO usage_stale (session_id) VALUES (old.session_id);
    INSERT OR IGNORE INTO usage_stale (session_id) VALUES (new.session_id);
END;

CREATE TRIGGER IF NOT EXISTS usage_spans_ad AFTER DELETE ON spans
BEGIN
    INSERT OR IGNORE INTO usage_stale (session_id) VALUES (old.session_id);
END;

-- What a report groups by and filters on follows the session at once.
CREATE TRIGGER IF NOT EXISTS usage_sessions_au AFTER UPDATE OF user_id, surface, project_id, project_name, deleted_at ON sessions
WHEN new.user_id IS NOT old.user_id OR new.surface IS NOT old.surface OR new.project_id IS NOT old.project_id
    OR new.project_name IS NOT old.project_name OR (new.deleted_at IS NULL) <> (old.deleted_at IS NULL)
BEGIN
    UPDATE usage_slices SET user_id = new.user_id, surface = new.surface, project_id = new.project_id,
        project_name = new.project_name, live = new.deleted_at IS NULL
    WHERE session_id = new.id;
END;

-- Which messages a fork leaves out.
CREATE TRIGGER IF NOT EXISTS usage_sessions_kind AFTER UPDATE OF kind, fork_turn ON sessions
WHEN new.kind IS NOT old.kind OR new.fork_turn IS NOT old.fork_turn
BEGIN
    INSERT OR IGNORE INTO usage_stale (session_id) VALUES (new.id);
END;

CREATE TRIGGER IF NOT EXISTS usage_sessions_ad AFTER DELETE ON sessions
BEGIN
    DELETE FROM usage_slices WHERE session_id = old.id;
END;
