-- Which session counts a model call that an agent wrote into more than
-- one file (a session resumed into a new file, a file renamed): the
-- call's usage is counted in the session imported first, the others
-- keep the messages without it. call is the agent's id of the call,
-- prefixed with the agent's name. A purged session's calls go with it.
-- IF NOT EXISTS: tests that set a store back to an older version run
-- this again.
CREATE TABLE IF NOT EXISTS usage_calls (
    user_id    TEXT NOT NULL,
    call       TEXT NOT NULL,
    session_id TEXT NOT NULL,
    PRIMARY KEY (user_id, call)
) STRICT, WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS usage_calls_session ON usage_calls (session_id);

CREATE TRIGGER IF NOT EXISTS usage_calls_purged AFTER DELETE ON sessions BEGIN
    DELETE FROM usage_calls WHERE session_id = old.id;
END;
