// Package goose reads the sessions of goose, Block's agent, for loom's
// importer.
//
// # Where
//
// goose keeps its sessions in its data directory's sessions/: by
// default ~/.local/share/goose/sessions on Linux and macOS
// ($XDG_DATA_HOME/goose/sessions; some macOS builds use
// ~/Library/Application Support/Block/goose/sessions, which is looked at
// too), %APPDATA%\Block\goose\data\sessions on Windows, and
// $GOOSE_PATH_ROOT/data/sessions when that variable holds an absolute
// path. Recent versions keep them in the SQLite database
// sessions.db there (tables sessions and messages); before, it wrote one
// <session id>.jsonl file per session, which it moved into the database
// when it created it. When the directory holds the database only the
// database is read; a JSONL file named as the root is read.
//
// sessions.db is opened read-only, without blocking goose and without
// reading what goose has not committed, as opencode's database is (see
// importer.OpenSQLite): a database being written in rollback-journal
// mode is waited for 3 seconds and then reported as being written, and
// a damaged one is an error of the whole file. Nothing is ever written
// to it.
//
// # What is imported
//
//   - One session per goose session with messages (a session goose
//     created and never prompted is skipped as "empty-session"), under
//     goose's id (20250101_1, or the file name), with its name (the
//     description of older versions) as its title, its working
//     directory, times, provider and model (schema 6 and later).
//   - Messages keep goose's ids: the message_id column (schema 7 and
//     later), else msg_<session>_<row id>, the form goose's migration 7
//     gives them, so a copy imported before goose migrated its database
//     grows without a fork; a JSONL line without an id is named
//     <session>:<line>.
//   - User text, and images as file parts (a data: URL). Assistant
//     text, thinking as reasoning (its signature in metadata; redacted
//     thinking keeps its data), and tool calls (toolRequest and
//     frontendToolRequest) as tool parts completed by the toolResponse
//     goose writes in the next user message: the output is the result's
//     text, an error result (status error, or isError) is an error. A
//     call goose could not parse is a tool part in error.
//   - A compaction (as goose marks it by visibility): the messages it summarised
//     stay as they were; the summary goose puts in the model's context
//     (a user message hidden from the user, after the hidden messages)
//     is a summary message counting one compaction, and the note goose
//     adds after it, like any other message hidden from the user but
//     sent to the model, is a system message.
//   - Usage: goose records token counts per session only (input and
//     output, accumulated over the session, or before they were
//     accumulated the last call's). They are put on the session's last
//     assistant message, with its model and provider; as the session
//     grows, the next import moves them to the new last reply. No
//     message holds the usage of its own model call, reasoning and
//     cache tokens are not recorded, and the cost is that of the totals
//     at the model's price.
//
// # What is skipped
//
// Counted as skipped: toolConfirmationRequest, actionRequired and
// systemNotification items (a confirmation asked of the user, a notice
// in goose's window), the conversationCompacted, summarizationRequested
// and contextLengthExceeded markers of older versions, empty text and
// reasoning, a tool result whose call is not in the session
// ("orphan-tool-response"), a message id seen twice
// ("duplicate-message"), and unknown roles and item types
// ("unknown:<type>"). A row or line that is not valid JSON, or a
// content column over 64 MiB, is a problem and the rest is read. goose's
// threads (thread_messages), extension data, recipes, schedules and the
// session type (user, scheduled, sub_agent, hidden) are not read: a
// sub-agent's session is imported as a main session of its own, since
// goose records no link to the session that ran it.
//
// # Versions
//
// The formats were taken from goose's source: sessions.db as created by
// its first schema and as migrations 1 to 13 extend it, and the JSONL
// files of the versions before. The tests read databases and files
// built to those definitions, not files written by goose itself.
package goose
