// Package crush reads the sessions of Crush, Charm's coding agent, for
// loom's importer.
//
// # Where
//
// Crush keeps each project's sessions in the SQLite database crush.db
// in the project's data directory (.crush in the project unless its
// configuration's options.data_directory says otherwise). It lists the
// projects it has run in, with their data directories, in projects.json
// in its global data directory: $CRUSH_GLOBAL_DATA, else
// $XDG_DATA_HOME/crush, else ~/.local/share/crush (%LOCALAPPDATA%\crush
// on Windows). Those data directories are the default roots; a project
// that file does not list (a version before it) is read by naming it, or
// its data directory, or its crush.db as PATH.
//
// crush.db is opened read-only, without blocking Crush and without
// reading what it has not committed (see importer.OpenSQLite). Nothing
// is ever written to it.
//
// # What is imported
//
//   - One session per row of sessions with messages (a session never
//     prompted is skipped as "empty-session"), under Crush's id, with
//     its title and times; the working directory is the project that
//     holds the .crush directory (Crush records none).
//   - A sub-agent's session (parent_session_id set: the agent and
//     agentic_fetch tools, whose session id is <message id>$$<call id>)
//     is a sub-agent session of its parent, linked by an agent part
//     after the call that ran it. The sessions older versions made to
//     ask for a title ("title-…") are skipped as "title-session".
//   - Messages keep Crush's ids and its order; each part of the parts
//     column is one part, named <message id>/<index>: text (a hidden
//     continuation keeps "hidden" in its metadata), reasoning (its
//     signature in metadata), images (image_url) and attachments
//     (binary, as a data: URL with its file name), tool calls completed
//     by the tool_result parts of the next message of role tool (its
//     content as output; is_error an error; the result's JSON metadata
//     kept). A finish part gives the reply's completion time; one that
//     ended in error keeps its message as a text part.
//   - The summary Crush writes when it summarises a session (the
//     message sessions.summary_message_id names, or is_summary_message)
//     is a summary message counting one compaction.
//   - Usage: Crush records it per session only: the prompt and
//     completion tokens of its last model call and the session's cost.
//     They are put on the session's last reply with its model and
//     provider. Crush adds a sub-agent's cost to its parent's; the
//     parent keeps its own (its cost less its sub-agents'), so that the
//     cost is counted once. No message holds its own call's usage.
//
// # What is skipped
//
// Counted as skipped: empty text and reasoning, a result whose call is
// not in the session ("orphan-tool-result"), a sub-agent whose parent is
// gone ("orphan-sub-agent"), and unknown roles and part types
// ("unknown:<type>"). A parts column that is not JSON, or over 64 MiB,
// is a problem and the rest is read. The files table (Crush's history
// of the files it changed), todos and the tables of later versions are
// not read.
//
// # Versions
//
// The layout was taken from Crush's source (internal/db/migrations and
// internal/message): the tests build crush.db with the statements of its
// first migration, with and without the later ones that add
// summary_message_id, provider, is_summary_message and todos. Crush's npm
// package fetches its binary at install, which this project's tests
// cannot do: no test reads a file Crush itself wrote.
package crush
