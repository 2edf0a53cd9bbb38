// Package continuedev reads the sessions of Continue for loom's
// importer: its command-line agent cn (npm @continuedev/cli) and its VS
// Code and JetBrains extensions, which keep them in the same place and
// form. (The package is not named continue, a Go keyword; the tool's
// name in loom is "continue".)
//
// # Where
//
// Continue keeps its sessions in ~/.continue/sessions
// ($CONTINUE_GLOBAL_DIR/sessions when that variable is set): one
// <session id>.json file per session, the whole session, written again
// at each change, and sessions.json, the list of sessions with their
// start times. Each session file is read on its own; sessions.json is
// read beside it for the session's start time (a session it does not
// list starts when its file was last written) but is no session's file,
// so that a session is read again only when its own file changed. PATH
// may be the global directory, its sessions directory or one session
// file.
//
// # What is imported
//
//   - One session per file, under Continue's session id, with its title
//     (the placeholders "New Session" and the CLI's "Untitled Session"
//     count as none), its workspace as the working directory (a file://
//     URI in the extensions, a path in the CLI), and the title of its
//     chat model as its model (Continue records no provider); a reply
//     whose usage names its model (the CLI's) has that model.
//   - History items in order. A message keeps its id when Continue gave
//     it one; an item without one is named <session id>:<index>, its
//     place in the history, to which Continue appends.
//   - User messages with their text and images (file parts); the
//     context attached to a prompt (files, selections, what a context
//     provider added: the item's contextItems) is a system message of
//     its own after it, <id>/context, so it is never the prompt.
//   - Assistant messages with their text, the reasoning Continue kept
//     on the item, tool calls as tool parts, and their usage (prompt,
//     completion, cached and reasoning tokens, in the CLI's snake_case
//     or camelCase) when the message has it;
//     otherwise the session's usage, when the CLI recorded one, goes on
//     the last assistant message. A tool part takes its input from the
//     parsed arguments, and its status and output from the call's state
//     (toolCallStates, or toolCallState in older versions): done is
//     completed, errored and canceled are errors, and a call still
//     generating, waiting or running is stored without a result (an
//     error "no result in the source file" that a later import
//     completes). A tool message completes a call that has no state.
//   - "thinking" messages as assistant messages holding a reasoning
//     part (with the signature, or the redacted data); system messages
//     as system messages.
//   - A compaction (an item's conversationSummary) as a summary message
//     after the item, <id>/summary, counting one compaction.
//   - Continue records no time per message: a message has the time of
//     its reasoning when it has one, else the session's start.
//
// # What is skipped
//
// Counted as skipped: a tool message whose call's state already holds
// the result ("tool-result"), one whose call is not in the session
// ("orphan-tool-result"), messages and thinking left with nothing,
// sessions with no messages ("empty-session"), and unknown roles
// ("unknown:<role>"). A file that is not a session, or a history item
// that is not an object, is a problem; the rest is read. Editor state,
// prompt logs, applied rules and the mode are not read.
//
// # Versions
//
// The format was taken from Continue's source (core/index.d.ts and the
// CLI's session store). The tests read hand-written files of the
// extension's form (no message ids, toolCallState) and of the CLI's
// (message ids, toolCallStates, tool messages, usage), and what the real
// cn 1.5.47 writes when it runs offline against a fake model
// (cli/import_realcontinue_test.go).
package continuedev
