-- Sessions: one row per thread of work, with the counters that make
-- listing cheap (message_count, turn_count, last_prompt, usage totals).
CREATE TABLE sessions (
    id                 TEXT PRIMARY KEY,
    user_id            TEXT NOT NULL,
    key                TEXT,
    surface            TEXT NOT NULL DEFAULT '',
    title              TEXT NOT NULL DEFAULT '',
    description        TEXT NOT NULL DEFAULT '',
    kind               TEXT NOT NULL DEFAULT 'main' CHECK (kind IN ('main', 'fork', 'subagent')),
    parent_id          TEXT,
    fork_turn          INTEGER NOT NULL DEFAULT 0,
    project_id         TEXT NOT NULL DEFAULT '',
    project_name       TEXT NOT NULL DEFAULT '',
    project_root       TEXT NOT NULL DEFAULT '',
    cwd                TEXT NOT NULL DEFAULT '',
    model              TEXT NOT NULL DEFAULT '',
    provider           TEXT NOT NULL DEFAULT '',
    profile            TEXT NOT NULL DEFAULT '',
    message_count      INTEGER NOT NULL DEFAULT 0,
    turn_count         INTEGER NOT NULL DEFAULT 0,
    summary_seq        INTEGER NOT NULL DEFAULT 0,
    last_prompt        TEXT NOT NULL DEFAULT '',
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd           REAL NOT NULL DEFAULT 0,
    api_calls          INTEGER NOT NULL DEFAULT 0,
    compactions        INTEGER NOT NULL DEFAULT 0,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    deleted_at         TEXT
) STRICT;

CREATE INDEX sessions_recent ON sessions (user_id, updated_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX sessions_project_recent ON sessions (user_id, project_id, updated_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX sessions_key ON sessions (user_id, project_id, key) WHERE key IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX sessions_key_any ON sessions (user_id, key);
CREATE INDEX sessions_title ON sessions (user_id, title COLLATE NOCASE);
CREATE INDEX sessions_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX sessions_trash ON sessions (deleted_at) WHERE deleted_at IS NOT NULL;

-- Bodies hold what a message says: its parts as JSON and the text that
-- search indexes. A fork's copied messages share their parent's bodies,
-- which is what makes forking a long session cheap.
CREATE TABLE bodies (
    id      INTEGER PRIMARY KEY,
    parts   TEXT NOT NULL DEFAULT '[]',
    content TEXT NOT NULL DEFAULT ''
) STRICT;

-- Messages: gap-free seq per session; the primary key is the index that
-- newest-N seeks.
CREATE TABLE messages (
    session_id         TEXT NOT NULL,
    seq                INTEGER NOT NULL,
    id                 TEXT NOT NULL,
    role               TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system', 'summary')),
    turn               INTEGER NOT NULL DEFAULT 0,
    body_id            INTEGER NOT NULL,
    model              TEXT NOT NULL DEFAULT '',
    provider           TEXT NOT NULL DEFAULT '',
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd           REAL NOT NULL DEFAULT 0,
    api_calls          INTEGER NOT NULL DEFAULT 0,
    compactions        INTEGER NOT NULL DEFAULT 0,
    error              TEXT,
    created_at         TEXT NOT NULL,
    completed_at       TEXT,
    PRIMARY KEY (session_id, seq)
) STRICT, WITHOUT ROWID;

CREATE INDEX messages_body ON messages (body_id);

-- Full-text index over bodies.content, kept in sync by triggers, so rows
-- changed by hand with sqlite3 keep the index right too.
CREATE VIRTUAL TABLE bodies_fts USING fts5 (
    content,
    content = 'bodies',
    content_rowid = 'id',
    tokenize = 'porter unicode61'
);

-- While a bulk import runs (a row here, inside its transaction only), the
-- insert trigger is skipped and the import indexes its bodies in one
-- statement, which is several times faster than row by row.
CREATE TABLE bulk_load (active INTEGER NOT NULL) STRICT;

CREATE TRIGGER bodies_ai AFTER INSERT ON bodies
WHEN NOT EXISTS (SELECT 1 FROM bulk_load)
BEGIN
    INSERT INTO bodies_fts (rowid, content) VALUES (new.id, new.content);
END;

CREATE TRIGGER bodies_ad AFTER DELETE ON bodies
BEGIN
    INSERT INTO bodies_fts (bodies_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;

CREATE TRIGGER bodies_au AFTER UPDATE OF content ON bodies
BEGIN
    INSERT INTO bodies_fts (bodies_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO bodies_fts (rowid, content) VALUES (new.id, new.content);
END;

-- A body goes when the last message using it goes.
CREATE TRIGGER messages_ad AFTER DELETE ON messages
WHEN NOT EXISTS (SELECT 1 FROM messages WHERE body_id = old.body_id)
BEGIN
    DELETE FROM bodies WHERE id = old.body_id;
END;

-- Locks: which process writes a session. A lock may name a session that
-- does not exist yet (it is created by its first message).
CREATE TABLE locks (
    session_id TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    host       TEXT NOT NULL,
    since      TEXT NOT NULL,
    expires_at TEXT NOT NULL
) STRICT;

-- Deleting a session row deletes its messages (and so their bodies and
-- search entries), whether or not foreign keys are enabled.
CREATE TRIGGER sessions_ad AFTER DELETE ON sessions
BEGIN
    DELETE FROM messages WHERE session_id = old.id;
    DELETE FROM locks WHERE session_id = old.id;
END;
