-- Which session counts a model call that an agent wrote into more than
-- one file (a session resumed into a new file, a file renamed): the
-- call's usage is counted in the session imported first, the others
-- keep the messages without it. call is the agent's id of the call,
-- prefixed with the agent's name. A purged session's calls go with it.
CREATE TABLE usage_calls (
    user_id    text COLLATE "C" NOT NULL,
    call       text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (user_id, call)
);

CREATE INDEX usage_calls_session ON usage_calls (session_id);

CREATE FUNCTION usage_calls_purged() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT
AS $$
BEGIN
    DELETE FROM usage_calls WHERE session_id = OLD.id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER usage_calls_purged AFTER DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION usage_calls_purged();
