// Package opencode reads opencode's sessions for loom's importer.
//
// # Where
//
// opencode keeps its data in $XDG_DATA_HOME/opencode, by default
// ~/.local/share/opencode. Before version 1.2 it wrote a JSON storage
// tree there (storage/session/<project>/<session>.json,
// storage/message/<session>/<message>.json,
// storage/part/<message>/<part>.json); since 1.2 it keeps everything in
// the SQLite database opencode.db (tables session, message and part,
// messages and parts as JSON in their data columns), into which it moved
// the tree on its first start. When the data directory holds both, only
// the database is read, since every session of the tree is in it under
// the same id; the tree is read when it is named as the root itself,
// and a database file named as the root is read whatever its name.
// opencode.db is opened read-only (query_only, no checkpoints, short
// transactions), so opencode can keep working while it is read, and
// nothing a writer has not committed is ever read: SQLite's locks are
// honoured, so that the read of a rollback-journal database (one set to
// journal_mode DELETE, TRUNCATE or PERSIST) that a writer is writing
// waits up to 3 seconds and then fails with "opencode.db is being
// written; try again", and a journal left hot by a writer that died
// mid-transaction (which a read-only reader may not roll back; opencode
// does when it next opens the database) fails the read too. Only a
// database in WAL mode with no -wal or -journal file beside it, which no
// connection has open and whose file holds committed pages only, is read
// as immutable, so that no -wal or -shm file is created beside it. A
// database that cannot be read (damaged, cut short, not a SQLite file)
// is an error of the whole file, never an empty result, so that the
// importer reports it and reads it again next time.
//
// Symbolic links in the data directory are followed, to directories and
// to files alike (a project's directory kept by a dotfile manager, a
// storage tree moved to another disk); dangling ones are passed over.
//
// # What is imported
//
//   - One session per opencode session, under its opencode id, with its
//     title (the placeholder "New session - <time>" counts as none),
//     working directory, opencode version, times, and the model and
//     provider of its last reply. opencode does not record the git
//     branch.
//   - A session run by the task tool (one with a parent) is a sub-agent
//     session of its parent; the task call in the parent is followed by
//     an agent part naming the sub-agent and the child session.
//   - User messages with what the user typed and attached (text, files).
//     Text opencode added to a user message itself (the content of an
//     attached file, an instruction to call a sub-agent, "Continue if
//     you have next steps" after a compaction) becomes a system message
//     of its own after it, so it is never taken for a prompt.
//   - Assistant messages with their text, reasoning in clear, tool
//     calls (one tool part each: input, output or error, status, title,
//     metadata, start and end times, attached files as file parts), and
//     step-start and step-finish parts; the message's usage is the sum
//     of its steps' tokens (input, output, reasoning, cache read and
//     write) and cost, its error, model, provider and times. opencode
//     counts reasoning tokens apart from its output; loom's output
//     holds them.
//   - The summary of a compaction as a summary message.
//
// # What is skipped
//
// Counted as skipped, by type: snapshot and patch parts (the working
// tree's state), compaction parts (the request; its summary is kept),
// agent parts (an @agent mention; the task call it leads to is kept),
// subtask parts (a command run as a sub-task; likewise), retry parts,
// reasoning with no text in clear ("empty-reasoning"), user messages
// left with nothing ("empty-user-message", such as a compaction
// request), parts whose message is missing or unreadable ("orphan-part"),
// and any part type or message role this reader does not know
// ("unknown:<type>"). A file or row that is not valid JSON, or larger
// than 64 MiB, is reported as a problem with its file (and line, for
// the tree) and the rest is still read. Sessions opencode archived are
// imported like the others; todos, permissions, shares and the diff
// summaries opencode keeps beside sessions are not read.
//
// # Versions
//
// The formats were taken from opencode's source: the storage tree as
// written by opencode 1.0 and 1.1, and opencode.db as created by 1.2
// (its first schema) and as later versions extend it. The tests read a
// storage tree and databases built from it with both schemas, and a
// database opencode 1.18.33 itself wrote (testdata/real-1.18.33.db).
//
// # Kilo Code's CLI
//
// Kilo (Kilo Code's CLI, 7 and later) is a fork of opencode that keeps
// its sessions in kilo.db, in $XDG_DATA_HOME/kilo (~/.local/share/kilo),
// a database of opencode's schema and records. Kilo, a second Format of
// this package, reads it as opencode's, under Kilo's own name (its
// sessions are kilo:<id>).
//
// Other forks are Formats made by Fork (registered in importer/variants:
// MiMoCode, NanoCode). NanoCode 1.2.28 counts a reply's reasoning tokens
// inside its output as well as apart, its total being the sum without
// them: where the total says so, the output is taken as it is.
package opencode
