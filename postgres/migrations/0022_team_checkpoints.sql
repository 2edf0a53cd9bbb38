-- The hub's checkpoints of teams' chains (docs/team.md, "Checkpoints:
-- the chain verified once"): the verified state after entry seq, so that
-- a hub process that starts takes in the entries after it rather than
-- verifying the chain from its genesis. Each is sealed with a MAC of a
-- key the hub process keeps outside this database (key_id names it): a
-- row whose MAC does not verify is ignored, and the chain verified from
-- its genesis. One row per team and key, as processes with keys of
-- their own may share the store.
CREATE TABLE team_checkpoints (
    team_id    text COLLATE "C" NOT NULL,
    key_id     text COLLATE "C" NOT NULL,
    seq        bigint NOT NULL,
    state      bytea NOT NULL,
    mac        bytea NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, key_id)
);
