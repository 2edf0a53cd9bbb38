// Package cline reads the sessions of Cline's command-line agent
// (cline 3) for loom's importer.
//
// # Where
//
// cline keeps each session in a directory of its own under
// ~/.cline/data/sessions (moved by $CLINE_SESSION_DATA_DIR, by
// $CLINE_DATA_DIR or --data-dir, whose sessions directory it is, and by
// $CLINE_DIR, whose data directory it is): <id>.json, the session's
// record (the row cline also keeps in its SQLite database,
// db/sessions.db: working directory, provider, model, parent session,
// title, totals), <id>.messages.json, its messages, <id>.compaction.json,
// its latest compaction, and the messages of the sub-agents it ran,
// <agent id>.messages.json. The database is not read: the files hold
// all it holds of a session, and more.
//
// These are not the task directories of Cline's VS Code extension
// (tasks/<id>/api_conversation_history.json and ui_messages.json), a
// format of its own.
//
// # What is imported
//
//   - One session per messages file, under cline's id, with the title,
//     working directory, provider, model and version of its record; a
//     session whose record names a parent session is a sub-agent of it.
//   - A sub-agent's messages file beside its parent's (its "agent" is
//     "subagent", its session id <parent>__<agent id>), read with the
//     parent: a sub-agent of it under that id, linked from the
//     spawn_agent call whose task is its first prompt.
//   - The summary of the latest compaction, from <id>.compaction.json,
//     as a summary message after the last message it replaces (cline
//     keeps every message in the messages file). cline records no usage
//     of the summary's model call.
//   - The user's prompts, without the <user_input mode="…"> wrapper
//     cline puts around them for the model.
//   - Replies with their text, reasoning in clear (thinking blocks) and
//     tool calls, each completed by the tool_result that answers it:
//     text as text, the list of results cline's own tools return (a
//     query, its result, whether it succeeded) as that JSON.
//   - What cline shows but never sends the model (a message marked
//     displayOnly: an error it met, such as a request cut short when
//     the user left) as a system message.
//   - Each reply's tokens and cost (its metrics): cline's input count
//     holds the cached tokens, loom's does not, so they are taken out.
//
// # What is skipped
//
// Counted as skipped, by type: roles and blocks this reader does not
// know ("role:<role>", "block:<type>"), a compaction whose last message
// is no longer the session's ("compaction:stale": cline no longer
// applies it), reasoning with no text in clear,
// replies left with nothing, and a session with no message. A messages
// file that is not JSON, a message that cannot be read and a tool_result
// that answers no earlier call are problems, and the rest is read.
//
// # Versions
//
// The format was read from the sessions cline 3.0.65 wrote; testdata
// holds them.
package cline
