-- Tokens: the HTTP server's access tokens. Only the SHA-256 of a secret is
-- kept; each token acts as one user until it is revoked.
CREATE TABLE tokens (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL,
    name         TEXT NOT NULL DEFAULT '',
    hash         TEXT NOT NULL UNIQUE,
    created_at   TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at   TEXT
) STRICT;

CREATE INDEX tokens_user ON tokens (user_id, created_at);
