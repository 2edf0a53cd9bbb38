// Package kiro reads the sessions of Kiro's CLI (kiro-cli, AWS's coding
// agent) for loom's importer.
//
// # Where
//
// Kiro keeps its sessions under ~/.kiro/sessions ($KIRO_HOME names the
// .kiro directory): the CLI writes cli/<id>.jsonl, a log a line an
// event, with <id>.json beside it (the session's id, working directory,
// title, times and state, its model among it); a later layout writes
// <workspace>/<session>/messages.jsonl with session.json beside it
// (title, times, workspace paths).
//
// # What is imported
//
// One session per log with messages, with its metadata's title,
// working directory, times and model.
//
//   - The CLI's log: Prompt lines are user messages, AssistantMessage
//     lines replies (their message_id kept), their text items text and
//     their toolUse items tool parts, completed by the toolResult items
//     of the ToolResults line after them (their text, or JSON items as
//     JSON, as output; status error an error). A line's
//     data.meta.timestamp, where Kiro writes one, dates it and the lines
//     after it.
//   - The later layout: user and assistant records are messages
//     (an assistant's reasoningModelId its model), a tool_call record
//     an assistant message holding the call, completed by the
//     tool_result naming it; each record's timestamp dates it.
//
// Messages without an id of Kiro's are named <session>:<line>. Kiro
// records no token usage in these files, so none is imported.
//
// # What is skipped
//
// Counted as skipped: unknown line kinds and item kinds
// ("unknown:<kind>", for instance compaction markers), results whose
// call is not in the session, empty sessions. A line that is not JSON
// is a problem and the rest is read. Kiro's IDE, which keeps its chats
// in its own extension storage, is not read.
//
// # Versions
//
// The layouts were learned from public tools that read Kiro's session
// files (no file written by Kiro was available, and kiro-cli needs AWS's
// service to run): the tests read hand-written logs of both layouts in
// testdata/.
package kiro
