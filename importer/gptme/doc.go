// Package gptme reads the conversation logs of gptme, the terminal
// agent, for loom's importer.
//
// # Where
//
// gptme keeps each conversation in a directory of its logs directory,
// named by the day it began and a name (2026-06-13-write-hello-world),
// holding conversation.jsonl, one message a line, appended to as the
// conversation goes on (and written again whole when a message is
// edited or undone). The logs directory is $GPTME_LOGS_HOME when set,
// else $XDG_DATA_HOME/gptme/logs, else ~/.local/share/gptme/logs, and
// the platform's data directory (~/Library/Application
// Support/gptme/logs on macOS, %LOCALAPPDATA%\gptme\gptme\logs on
// Windows). PATH may be the logs directory, a conversation's directory
// or one log file.
//
// # What is imported
//
//   - One session per conversation, under its directory's name, with
//     the directory gptme's workspace link names as working directory,
//     and the model of its last reply.
//   - Each message under its line number: prompts with their text and
//     attached files (file parts naming their paths), replies with their
//     text (a <thinking> or <think> block in it a reasoning part where
//     it was), model and provider (metadata.model, "anthropic/claude-…"),
//     tokens (input, output, cache read and creation, reasoning;
//     nested under usage, or at the metadata's top in older logs) and
//     cost.
//   - Calls in gptme's tool format (@<tool>(<call id>): <JSON
//     arguments>, on a line of the reply) are tool parts where they were
//     written, completed by the system message that carries their call
//     id. Calls in the markdown and XML formats are code blocks of the
//     reply's text, and their output the system message after it, which
//     is kept as a system message.
//   - Times: gptme's timestamps, ISO 8601 with an offset or, without
//     one, in this machine's local time, as gptme writes them.
//
// # What is skipped
//
// Counted as skipped: the system messages before the first prompt (the
// system prompt and workspace context gptme sends first), results
// folded into their calls ("tool-result"), empty messages, and roles
// gptme does not write ("unknown:<role>"). A line that is not a message
// is a problem; the rest is read. A conversation's branches
// (branches/*.jsonl, what an edit left aside), its config.toml and its
// attachments' contents are not read.
//
// # Versions
//
// The format was learnt from gptme's source (gptme/message.py,
// gptme/logmanager.py, gptme/dirs.py) and from public tools that read
// it. The fixtures in testdata are written by hand to it: a log in the
// tool format with nested usage, an attached file and a markdown-format
// patch, and an older log with the tokens at the metadata's top.
package gptme
