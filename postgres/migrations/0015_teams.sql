-- Teams (docs/team.md): what a hub keeps of each team. Entries of the
-- signed membership chain, as signed (the hub verifies an entry before
-- it appends it, and clients verify the whole chain again from its
-- genesis: they never trust these rows).
CREATE TABLE team_chain (
    team_id     text COLLATE "C" NOT NULL,
    seq         bigint NOT NULL,
    entry       bytea NOT NULL,
    received_at timestamptz NOT NULL,
    PRIMARY KEY (team_id, seq)
);

-- Which hub users may read and write a team's records: the members of
-- its chain, rewritten at each entry. A row added by hand lets a user
-- fetch ciphertext that no key of theirs opens.
CREATE TABLE team_members (
    team_id text COLLATE "C" NOT NULL,
    member  text COLLATE "C" NOT NULL,
    user_id text NOT NULL,
    PRIMARY KEY (team_id, member)
);
CREATE INDEX team_members_user ON team_members (team_id, user_id);

-- The records members' machines publish, each sealed under the team's
-- key of its epoch and signed by its author; filed by writer (host) and
-- index, as sync_records are.
CREATE TABLE team_records (
    team_id     text COLLATE "C" NOT NULL,
    host_id     text COLLATE "C" NOT NULL,
    idx         bigint NOT NULL,
    epoch       integer NOT NULL,
    header      bytea NOT NULL,
    body        bytea NOT NULL,
    received_at timestamptz NOT NULL,
    PRIMARY KEY (team_id, host_id, idx)
);
