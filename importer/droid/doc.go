// Package droid reads the sessions of Factory's droid for loom's
// importer.
//
// # Where
//
// droid keeps its sessions in ~/.factory/sessions (under
// $FACTORY_HOME_OVERRIDE in place of the home directory when it is
// set), a directory per working directory, named after its path with
// each / made a -. Each session is <id>.jsonl, with <id>.settings.json
// beside it: the session's model and settings, and its token totals.
//
// # What is imported
//
//   - One session per file, under droid's id, with its title (the
//     placeholder "New Session" counts as none), working directory and
//     the model of its last reply.
//   - The user's prompts, and the replies with their text, reasoning in
//     clear (thinking blocks) and tool calls, each completed by the
//     tool_result that answers it (its output, or its error).
//   - The session's token totals, from <id>.settings.json (input without
//     cached tokens, output, reasoning, cache reads and writes), on its
//     last reply, with its model calls (one a reply, one a compaction's
//     summary): droid records no usage per reply. A session that grows
//     moves them to its new last reply.
//   - A compaction (a compaction_state line) as a summary message where
//     the line stands, holding the model's summary (summaryText).
//
// # What is skipped
//
// Counted as skipped, by type: a compaction_state droid wrote without
// the model (a summaryKind other than llm_summary), the messages droid
// adds before a prompt for the model (ids starting with "context-": the
// tools available, reminders), bookkeeping lines (agent_turn_outcome and any line type
// this reader does not know), blocks of unknown types ("block:<type>"),
// reasoning with no text in clear, and a session with no message. A
// line that is not JSON, or a tool_result that answers no earlier call,
// is a problem reported with its line, and the rest is read.
//
// # Versions
//
// The format was read from sessions droid 0.215.0 wrote (session files
// of version 2); testdata holds them.
package droid
