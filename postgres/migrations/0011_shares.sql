-- Token scopes: a token without a row here is 'full' (every token made
-- before scopes); 'share' may only create, list and revoke its user's
-- share links.
CREATE TABLE token_scopes (
    token_id text COLLATE "C" PRIMARY KEY REFERENCES tokens (id) ON DELETE CASCADE,
    scope    text NOT NULL
);

-- Shares: share links' sealed sessions. blob is ciphertext only (the key
-- travels in the link's fragment, never here); it is set to NULL when
-- the share is revoked or found expired, and the row stays so that
-- `loom share list` can say what became of it.
CREATE TABLE shares (
    id         text COLLATE "C" PRIMARY KEY,
    user_id    text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    size       bigint NOT NULL,
    blob       bytea
);

CREATE INDEX shares_user ON shares (user_id, created_at);
CREATE INDEX shares_live ON shares (expires_at) WHERE blob IS NOT NULL;
