-- The chunks of kept originals without a session (a file of several
-- sessions, a database; or the files of a bundle kept before its
-- session was known), by bundle. Keeping a chunk of a bundle whose
-- session is known gives that session to the bundle's chunks without
-- one (UPDATE originals ... WHERE user_id = ? AND bundle = ? AND
-- session_id = ''), which read every chunk of the user without a
-- session through originals_session, for every file an import kept.
-- TestHotQueriesPlannedOnKeys checks the plan.
CREATE INDEX IF NOT EXISTS originals_unowned ON originals (user_id, bundle) WHERE session_id = '';
