// Package kimi reads the sessions of Kimi CLI, Moonshot AI's terminal
// agent, for loom's importer.
//
// # Where
//
// Kimi keeps its sessions under ~/.kimi/sessions ($KIMI_SHARE_DIR
// replaces ~/.kimi), in a directory per work directory named by the MD5
// of its path; kimi.json beside sessions/ lists the work directories,
// which is how a session's working directory is known. Each session is
// a directory named by its id holding context.jsonl (what the model is
// sent, one message a line, appended to) and wire.jsonl (the events of
// each turn, with their times and each model call's usage). Early
// versions wrote <session id>.jsonl, the context alone, directly in the
// work directory's directory. PATH may be the sessions directory, a
// work directory's, a session's, or one of its files.
//
// # What is imported
//
//   - One session per context file, under the session's id, with its
//     work directory; the provider is Moonshot AI (the files do not
//     name the model).
//   - Each context line under its line number: prompts (text, images),
//     replies (text, think parts as reasoning, tool calls with their
//     arguments), system messages. A tool message completes the call it
//     names; one whose text is Kimi's <system>ERROR…</system> fails it.
//   - From the wire log: the n-th turn's start is the n-th prompt's
//     time, and the n-th model call (a StatusUpdate with token usage)
//     gives the n-th reply its time and usage (input, output, cache
//     read and creation). A session without a wire log has the time its
//     file was written.
//
// # What is skipped
//
// Counted as skipped: Kimi's _checkpoint and _usage lines, results
// folded into their calls ("tool-result"), results whose call is not in
// the context, empty messages, and roles not known ("unknown:<role>"). A
// line that is not a message is a problem; the rest is read. The
// context files Kimi keeps aside when it compacts or rewinds a session
// (context_<n>.jsonl) are not read: what a compaction dropped stays in
// loom from an earlier import, not from them. Sub-agents' contexts are
// not read.
//
// # Versions
//
// The layout was learnt from Kimi CLI's source (kimi_cli/share.py,
// metadata.py, its context and wire modules) and its documentation, and
// from public tools that read it. The fixtures in testdata are written
// by hand to it: a session with a wire log (reasoning, a completed and a
// failed call, two turns) and an early version's session file.
package kimi
