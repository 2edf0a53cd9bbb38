// Package zed reads the threads of Zed's agent panel, and the text
// threads of its earlier assistant panel, for loom's importer.
//
// # Where
//
// Zed keeps its agent threads in the SQLite database threads/threads.db
// in its data directory: ~/.local/share/zed on Linux ($XDG_DATA_HOME/zed,
// $FLATPAK_XDG_DATA_HOME/zed in its Flatpak), ~/Library/Application
// Support/Zed on macOS, %LOCALAPPDATA%\Zed on Windows. Its assistant
// panel saved text threads as conversations/<summary> - <n>.zed.json in
// its configuration directory (~/.config/zed, $XDG_CONFIG_HOME/zed;
// %APPDATA%\Zed on Windows). threads.db is opened read-only, without
// blocking Zed or reading what it has not committed (see
// importer.OpenSQLite), and never written.
//
// # What is imported
//
// One session per row of the threads table with messages, under its id,
// with its summary as title, its first folder path (or the first
// worktree of the thread's project snapshot) as working directory, its
// model and provider, and its times. A row's data is the thread's JSON,
// zstd-compressed (data_type zstd) or not (json). Zed records no time
// per message: every message has the thread's last update.
//
//   - Version 0.3.0 (the agent panel): a User message keeps its id; its
//     Text items are text, Mention items file parts holding the
//     mentioned content, Image items images. An Agent message, named
//     <user message id>:<n>, has text, Thinking as reasoning (signature
//     kept), RedactedThinking as redacted reasoning, and ToolUse items as
//     tool parts completed by the message's tool_results (is_error an
//     error; the result's structured output in metadata). Resume
//     markers are counted as skipped.
//   - Versions 0.1.0 and 0.2.0 (the first agent panel): messages keep
//     their number (<thread>:<n>); segments are text, thinking and
//     redacted thinking; tool_uses are tool parts that tool_results
//     complete; a user message without segments is its context; hidden
//     messages are skipped.
//   - A sub-agent's thread (parent_id, or its subagent_context) is a
//     sub-agent session of its parent, linked by an agent part after the
//     call (subagent_context.tool_use_id) that ran it.
//   - Usage: Zed keeps the thread's cumulative token counts (input,
//     output, cache writes and reads), put on its last agent message; its
//     per-request counts are the context of each request, not added up,
//     and are not read.
//
// A text thread (.zed.json, "zed": "context") is one session: its text
// divided at each message's start into messages of their role (the
// metadata of versions 0.2.0 and later, message_metadata in 0.1.0),
// named <id>:<message id>, dated by the file's modification time. Slash
// commands' output sections are kept as the text they are.
//
// # What is skipped
//
// Counted as skipped: empty threads, Resume markers, unknown message and
// content kinds ("unknown:<kind>"), results whose call is not in the
// thread, messages without a role. A row whose data is not JSON, is
// damaged zstd, or is over 256 MiB compressed or expanded, is a problem
// and the other rows are read. Drafts, scroll positions, detailed
// summaries and the project snapshot's git state are not read.
//
// # Versions
//
// The layouts were taken from Zed's source (crates/agent: db.rs and its
// legacy thread; the assistant context's saved form): the tests build
// threads.db with its own CREATE TABLE and ALTER TABLE statements and
// write threads of versions 0.3.0 and 0.2.0 as it serialises them, and
// text threads of versions 0.4.0 and 0.1.0 by hand. Zed (not on npm) was
// not run.
package zed
