// Package copilotchat reads, for loom's importer, the chat sessions of
// GitHub Copilot Chat in VS Code ("copilot-vscode" in loom; "copilot"
// is GitHub's command-line agent, read elsewhere).
//
// # Where
//
// VS Code keeps a workspace's chat sessions in its workspace storage,
// <user dir>/workspaceStorage/<workspace hash>/chatSessions/, beside
// workspace.json, which names the workspace's folder; the sessions of a
// window with no folder open are in
// <user dir>/globalStorage/emptyWindowChatSessions/. The user directory
// is ~/.config/Code/User on Linux ($XDG_CONFIG_HOME moves it),
// ~/Library/Application Support/Code/User on macOS, %APPDATA%\Code\User
// on Windows, $VSCODE_PORTABLE/user-data/User for a portable install,
// and the same for VS Code Insiders and VSCodium. A session is one file:
// <session id>.json, the whole session written again at each change
// (versions 1 to 3 of its form), or, since VS Code 1.10x,
// <session id>.jsonl, a log of changes: its first line holds the session
// as begun, each later line sets, appends to or deletes one place in it
// (kinds 1, 2 and 3); the log is replayed to make the session. PATH may
// be a user directory's workspaceStorage, one workspace's storage, its
// chatSessions directory, or one session file.
//
// # What is imported
//
//   - One session per file, under VS Code's session id (else the file's
//     name), with its custom title, its creation time, and the
//     workspace's folder as working directory (none for an empty
//     window, or a multi-root workspace).
//   - Each request is a prompt, under its request id, with the text
//     typed and the files attached (file parts naming their paths), and
//     a reply, <request id>/response, with the model of the request's
//     modelId (less the "copilot/" vendor), its time, and its end (the
//     request's time plus the result's total elapsed time). The
//     response's items in order: markdown runs are one text part, an
//     inline reference is its name in the text, thinking items are
//     reasoning, tool invocations are tool parts. A tool part's input is
//     the arguments the model sent (the result's tool call rounds), else
//     what VS Code showed (its message, the terminal command); its
//     output is the result Copilot kept (toolCallResults), else what VS
//     Code said it did; an invocation left incomplete is an error
//     ("canceled" when the request was). The result's error is the
//     reply's error.
//   - The files hold no token counts loom reads, so no usage and no
//     cost; the provider is GitHub Copilot.
//
// # What is skipped
//
// Counted as skipped: edits (textEditGroup, notebookEditGroup; the tool
// calls that made them are imported), code block links, undo stops,
// progress and confirmation items, references, prompts and responses
// left empty, and response items of a kind not known
// ("unknown:<kind>"); in a log, changes of a kind not known
// ("unknown-change:<kind>"). A log line that is no change, or that
// changes a place the session does not have, is a problem; the rest is
// read. Sub-agents (runSubagent) are tool calls; their own turns are
// not in the file. The editor's index of sessions (state.vscdb) is not
// read.
//
// # Versions
//
// The form was learnt from VS Code's chat model (ISerializableChatData
// and its change log) and from public tools that read these files. The
// fixtures in testdata are written by hand to it: a version 3 session
// with a tool call round, reasoning and a canceled terminal call; a
// version 1 session of an empty window; and a .jsonl log.
package copilotchat
