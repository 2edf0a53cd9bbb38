// Package clinetasks reads, for loom's importer, the tasks of the VS
// Code extensions that keep Cline's layout: Cline (saoudrizwan.claude-dev,
// "cline-vscode" in loom, the name "cline" being its command-line
// agent's), Roo Code (rooveterinaryinc.roo-cline, "roo-code") and Kilo
// Code (kilocode.kilo-code, "kilo-code-vscode"; its command-line agent is
// read elsewhere).
//
// # Where
//
// Each extension keeps its tasks in its global storage directory:
// <user dir>/globalStorage/<extension id>/tasks/<task id>/, where the
// user directory is VS Code's (~/.config/Code/User on Linux,
// ~/Library/Application Support/Code/User on macOS,
// %APPDATA%\Code\User on Windows; $XDG_CONFIG_HOME moves the Linux one,
// $VSCODE_PORTABLE a portable install's), or that of VS Code Insiders,
// VSCodium, Cursor or Windsurf, which the extensions run in too. A task
// directory holds api_conversation_history.json (the conversation as
// sent to the model, in Anthropic's message form), ui_messages.json
// (what the extension showed, with each API request's tokens and cost),
// task_metadata.json (the models used) and, in Roo Code and Kilo Code,
// history_item.json (the task's entry in the extension's history). Each
// file is written again whole at each change; the task is read again
// when any of them changed. PATH may be the extension's storage, its
// tasks directory, a task directory or one of its files.
//
// # What is imported
//
//   - One session per task, under the task's id (Cline's is the time it
//     started, in milliseconds), with the history item's task text as
//     its title (Cline has none: the first prompt), its workspace as the
//     working directory (in Cline, the directory the environment
//     details name), and the last model of the task's metadata with its
//     provider.
//   - The conversation in order, each message under its place in it:
//     prompts with their text (less the <task>, <feedback>,
//     <user_message> or <answer> tag the extension wraps them in) and
//     images; replies with their text, reasoning (thinking, redacted
//     thinking with its data, Roo Code's reasoning) and tool calls, each
//     completed or failed by the tool_result that answers it. Before the
//     extensions called tools natively, a call was XML in the reply's
//     text and its result text in the next prompt: those are kept as
//     they were sent.
//   - Usage per reply: the tokens, cache reads and writes and cost of
//     each finished API request of ui_messages.json (api_req_started),
//     the n-th request on the n-th reply; requests beyond the replies
//     count on the last one, so that the task's total is whole. OpenAI's
//     prompt tokens lose the cached ones, which loom counts apart.
//   - Times: the message's own (ts, Roo Code and Kilo Code), else the
//     time of the request that sent or answered it, else the task's
//     start.
//   - Roo Code's compaction: a message marked isSummary is a summary
//     message counting one compaction. Its sub-tasks: a task whose
//     history item names a parent is a sub-agent session of it, and the
//     parent's new_task calls are linked to its children in order.
//
// # What is skipped
//
// Counted as skipped: the environment details the extension adds to
// every request ("environment-details"; the working directory is read
// from them), prompts left with nothing (a message of tool results
// only), content blocks of a kind not known ("unknown-block:<type>"),
// roles other than user and assistant ("unknown:<role>"), results of
// calls not in the conversation, and tasks with no conversation file. A
// file that is no JSON array, or an element of it that is not a
// message, is a problem; the rest is read. What only the extension
// showed (ui_messages.json's text, approvals, checkpoints) is not read:
// the conversation holds what the model was sent and said. Cline's
// checkpoints (shadow git repositories) and the extensions' settings are
// not read.
//
// # Versions
//
// The layout was learnt from the extensions' source (Cline's
// src/core/storage and ClineMessage, Roo Code's task persistence and
// HistoryItem) and from public tools that read it. The fixtures in
// testdata are written by hand to that layout: a Cline task with native
// tool calls and one from before them (string content, XML tools), and
// a Roo Code task with a sub-task, a compaction's summary and OpenAI
// usage.
package clinetasks
