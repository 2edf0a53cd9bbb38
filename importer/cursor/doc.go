// Package cursor reads the sessions of Cursor for loom's importer: the
// transcripts of its agent CLI (cursor-agent) and the chats of the
// editor's agent (Composer).
//
// # Where
//
// The CLI writes a transcript per chat under its projects directory,
// ~/.cursor/projects (the directory $CURSOR_CONFIG_DIR replaces
// ~/.cursor): <project>/agent-transcripts/<chat id>.jsonl, or
// <chat id>/<chat id>.jsonl, and a sub-agent's in
// <chat id>/subagents/<sub-agent id>.jsonl; older versions wrote .txt
// transcripts of the same names. <project> is the project's path with
// every character that is not a letter or digit made "-": it is turned
// back into the working directory when such a directory exists here.
//
// The editor keeps its chats in state.vscdb (SQLite) in its global
// storage: Cursor/User/globalStorage under ~/.config ($XDG_CONFIG_HOME
// when absolute) on Linux, ~/Library/Application Support on macOS and
// %APPDATA% on Windows, or $VSCODE_APPDATA, which moves it as it moves
// VS Code's. The database is opened read-only, without blocking the
// editor or reading what it has not committed (see importer.OpenSQLite),
// and never written.
//
// # What is imported
//
// From a CLI transcript (JSONL: a line a message in the form of
// Anthropic's Messages API): prompts (the text inside <user_query>, the
// context Cursor adds around it left out), replies, thinking as
// reasoning (its signature kept), images, and tool_use blocks as tool
// parts completed by the tool_result naming them (is_error an error). A
// call whose result Cursor did not write (it writes none for some of
// its tools, and a call without an id) is closed as completed, with
// {"result": "not recorded"} in its metadata, when its turn ends
// (turn_ended, or the next prompt). The text form is read the same way:
// [Thinking] blocks are reasoning, [Tool call] <name> a tool part whose
// "key: value" lines are its input, completed by the next [Tool result]
// <name>. A sub-agent's transcript is a sub-agent session of the chat in
// whose directory it is (Cursor records no link to the call that ran
// it, so no agent part names it). Transcripts record no times, no ids,
// no model and no usage: messages are named <chat id>:<line>, and their
// time is the file's modification time.
//
// From the editor's database: one session per composerData:<id> value
// with messages, titled with its name, the working directory the first
// of its bubbles' workspace URIs names. Its bubbles, in the order
// fullConversationHeadersOnly lists them (each read from
// bubbleId:<chat>:<bubble>; older versions' inline conversation is read
// too), are its messages under their bubble ids: type 1 the user's
// text, type 2 the agent's text, thinking, and its tool call
// (toolFormerData: name, arguments, result, and status: completed,
// error, or cancelled as an error), with the bubble's token counts as
// usage and its model (modelInfo, else the chat's modelConfig unless it
// is "default"). A chat another lists in subComposerIds is a sub-agent
// session of it.
//
// # What is skipped
//
// Counted as skipped: empty text, bubbles without text, thinking or a
// call ("empty-bubble"), bubbles of unknown types, lines without a role
// (turn_ended), unknown block types ("unknown:<type>"), results whose
// call is not in the session, empty chats and transcripts. A line or
// value that is not JSON, or a value over 64 MiB, is a problem and the
// rest is read; a transcript none of whose lines can be read is one
// line, a file that could not be read, and one of 0 bytes says it is
// empty, whether or not its sub-agents' transcripts are read beside it. The editor's checkpoints, code block diffs, context
// pieces and summaries are not read, nor the SQLite store.db files the
// first versions of the CLI kept under ~/.cursor/chats (protobuf blobs
// without a published schema).
//
// # Versions
//
// The layouts were learned from public tools that read Cursor's files
// and from Cursor's documentation of its CLI's configuration directory;
// no file written by Cursor was available: the tests read hand-written
// transcripts in testdata/ and databases built with the editor's
// table definition and values of the shapes those tools describe
// (composerData version 10, bubbles version 3, and the inline
// conversation of older versions).
package cursor
