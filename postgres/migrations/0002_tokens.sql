-- Tokens: the HTTP server's access tokens. Only the SHA-256 of a secret is
-- kept; each token acts as one user until it is revoked.
CREATE TABLE tokens (
    id           text COLLATE "C" PRIMARY KEY,
    user_id      text NOT NULL,
    name         text NOT NULL DEFAULT '',
    hash         text NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);

CREATE INDEX tokens_user ON tokens (user_id, created_at);
