// Package pi reads the sessions of the Pi coding agent
// (@mariozechner/pi-coding-agent, the `pi` command) into loom.
//
// Pi keeps one JSONL file per session under
// $PI_CODING_AGENT_DIR/sessions (~/.pi/agent/sessions), in a directory
// per working directory (--<cwd with / as ->--/<time>_<id>.jsonl), or
// under $PI_CODING_AGENT_SESSION_DIR when that is set. The first line is
// the header (type "session": format version, id, time, cwd, and
// parentSession for a session pi forked or cloned from another file);
// every other line is an entry of a tree, linked by id and parentId.
// Pi resumes a session at its last entry, so the session loom imports
// is the path from the root to the file's last entry, and every other
// leaf (a branch left by /tree or a fork in place) is a loom fork of it,
// keyed pi:<session id>@<first entry of the branch>, at the last turn
// they share whole. Version 1 files, which have no ids, are one chain.
//
// What becomes what:
//
//   - message entries: user → user messages (text, images as file
//     parts); assistant → assistant messages with text, thinking as
//     reasoning (its signature kept; a redacted one kept as
//     redacted_data), toolCall as a tool part, model, provider, usage
//     (input, output, cache read and write tokens) and the cost pi
//     recorded, and an error when it stopped on "error" or "aborted";
//     toolResult completes its call's tool part (output, or error when
//     isError, the structured details in metadata); bashExecution (a
//     command the user ran with !), custom and the extensions' messages
//     are system messages.
//   - compaction → a summary message (one compaction; firstKeptEntryId,
//     tokensBefore and details in its part's metadata). The messages
//     before it stay where they are, as in the file.
//   - branch_summary (what pi sends of a branch it left) and
//     custom_message → system messages.
//   - session_info: its latest name titles the session.
//   - model_change, thinking_level_change, label, custom (extension
//     state) and session_info lines are counted as skipped, by type, and
//     so is an unknown entry type (unknown:<type>); a line that is not
//     JSON, an entry before the header or a parentId that names no
//     earlier entry is a problem, and the rest is read. After a line
//     that could not be read, an entry whose parent is not found hangs
//     on the last entry read (its parent is most likely that line: no
//     fork, no second line), and a lost header leaves the entries to a
//     session named by the file.
//
// Pi records neither its version nor a git branch in the file.
package pi
