-- Tokens may expire: a token whose expires_at has passed is refused like
-- an unknown one. NULL (every token made before this migration) never
-- expires.
ALTER TABLE tokens ADD COLUMN expires_at timestamptz;
