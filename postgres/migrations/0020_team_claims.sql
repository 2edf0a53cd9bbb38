-- What a team's records claim, filed by the hub at each push
-- (docs/team.md, "A session has one owner"): the member who first wrote
-- each session, by its tag (the hub cannot read a session's id), and
-- the newest chain head each member's key named. The hub refuses a
-- record of another member's session, and one naming an older head than
-- its key named before. Clients check both again themselves.
CREATE TABLE team_sessions (
    team_id text COLLATE "C" NOT NULL,
    tag     text COLLATE "C" NOT NULL,
    owner   text COLLATE "C" NOT NULL,
    PRIMARY KEY (team_id, tag)
);

CREATE TABLE team_heads (
    team_id text COLLATE "C" NOT NULL,
    author  text COLLATE "C" NOT NULL,
    seq     bigint NOT NULL,
    PRIMARY KEY (team_id, author)
);
