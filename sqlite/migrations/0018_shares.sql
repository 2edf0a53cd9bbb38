-- Token scopes: a token without a row here is 'full' (every token made
-- before scopes); 'share' may only create, list and revoke its user's
-- share links.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.
CREATE TABLE IF NOT EXISTS token_scopes (
    token_id TEXT PRIMARY KEY REFERENCES tokens (id) ON DELETE CASCADE,
    scope    TEXT NOT NULL
) STRICT;

-- Shares: share links' sealed sessions. blob is ciphertext only (the key
-- travels in the link's fragment, never here); it is set to NULL when
-- the share is revoked or found expired, and the row stays so that
-- `loom share list` can say what became of it.
CREATE TABLE IF NOT EXISTS shares (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    revoked_at TEXT,
    size       INTEGER NOT NULL,
    blob       BLOB
) STRICT;

CREATE INDEX IF NOT EXISTS shares_user ON shares (user_id, created_at);
CREATE INDEX IF NOT EXISTS shares_live ON shares (expires_at) WHERE blob IS NOT NULL;
