// Package aider reads the chat history of Aider (aider.chat): the
// Markdown file .aider.chat.history.md that Aider appends to in the git
// root of the project it runs in (the directory it runs in outside git;
// --chat-history-file or $AIDER_CHAT_HISTORY_FILE put it elsewhere).
//
// # Where
//
// Aider has no directory of its own, so there is no default location:
// `loom session import --from aider PATH…` reads PATH, one history file
// (whatever its name, so a moved one too) or a directory searched below
// for .aider.chat.history.md files, leaving out dependency, build and
// version-control directories (node_modules, .git, vendor, .venv,
// target, …). `--from all` passes Aider over.
//
// # What is imported
//
// Aider writes, for each run, a header "# aider chat started at
// YYYY-MM-DD HH:MM:SS" (local time), then:
//
//   - what the user typed, each line as "#### line" followed by two
//     spaces (Markdown's line break): a user message; consecutive such
//     lines are one multi-line prompt. An in-chat command (/add, /run,
//     /model, !cmd …) is a system message, since it only ran in Aider;
//     /ask, /code, /architect and /context followed by a request send
//     that request to the model and are user messages. An answer to
//     one of Aider's questions that it logs as typed ("Create new file?
//     (Y)es/(N)o … : a") is a system message too. "<blank>" (an empty
//     input) is counted as skipped (blank-prompt).
//   - Aider's own output (its announcements, files added, edits applied,
//     commits, errors, questions and their answers), each line as "> line"
//     followed by two spaces: consecutive lines are one system message.
//     An output with line breaks in it has only its first line quoted:
//     the lines that follow it with no blank line between are its (a
//     reply always starts after a blank line). "Aider vX" gives the session's version; "Model:" or "Main model:"
//     the model of the replies that follow; "Tokens: … sent, … cache
//     write, … cache hit, … received. Cost: $… message" the usage and
//     cost of the reply before it (Aider rounds the counts above a
//     thousand; what it sent includes the cached tokens, which are
//     taken out of the input).
//   - everything else, the model's reply (text, SEARCH/REPLACE blocks,
//     diffs): an assistant message, its provider taken from its model's
//     name (anthropic/…, or claude-… , gpt-…, gemini-…). A reasoning
//     model's thinking, which Aider wraps in its tag
//     (<thinking-content-…>), is a reasoning part before the answer.
//
// A reply's own headings and quotes ("#### Why", "> note") are told from
// Aider's lines by the two trailing spaces Aider ends its lines with,
// and inside a fenced code block everything is the reply's. In a file
// whose trailing spaces were removed (an editor), a prefixed line
// outside a code block is taken for Aider's.
//
// Each run is a session: its source id is the first 12 hex digits of
// SHA-256 of the file's real path and the run's start
// (<hash>-20250310T140255, -2 for a second run started in the same
// second), its working directory is the file's directory, and its
// title is its first prompt. Aider records no time per message: each
// message has its run's start time. A message's id is the session's id
// and its line counted from the run's header, so a history that grew
// (Aider appends to it) adds only its new messages when imported again.
// A run with neither a prompt nor a reply (Aider started and quit) is
// counted as skipped (empty-session), and lines before the first header
// as before-first-run; a file with no header at all is not Aider's.
//
// Not imported: .aider.input.history (the prompts again, without
// replies), .aider.llm.history (off by default), the git branch (not
// recorded), the files in the chat (only as the output lines that name
// them).
package aider
