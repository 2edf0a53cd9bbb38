// Package windsurf reads, for loom's importer, the Cascade trajectories
// that Windsurf lets the user download as Markdown ("Download
// Trajectory" in a conversation's menu), and the conversations Google's
// Antigravity exports in the same form.
//
// Windsurf keeps its conversations in ~/.codeium/windsurf/cascade/<id>.pb,
// protobuf encrypted with a key it does not store beside them, and
// Antigravity its own the same way: neither store can be read. A
// downloaded trajectory is the one form of a conversation the user can
// keep.
//
// # Where
//
// Windsurf saves a trajectory wherever the user says, so there is no
// default location: `loom session import --from windsurf PATH…` reads
// PATH, one file (whatever its name) or a directory searched below for
// .md files, leaving out dependency, build and version-control
// directories. $LOOM_WINDSURF_DIR (a list of directories, separated as
// in PATH) names where they are kept; then `--from windsurf` and
// `--from all` read it, and `--watch` follows it. A Markdown file in a
// directory that is not a trajectory is passed over, counted as
// not-a-trajectory, unless it is not text (a NUL byte, or bytes that are
// not UTF-8, before its header): such a file is garbage, one line, and
// the import exits 1. One file named that does not start as a
// trajectory is refused.
//
// # The format
//
// A trajectory starts with "# Chat Conversation" (older versions:
// "# Cascade Chat Conversation"; some tools that keep them add YAML
// front matter above it, whose title and workspace are read), a note
// that the file holds the output of the conversation only, then its
// turns, each under a heading of its own:
//
//   - "### User Input": what the user sent, a user message; each file
//     it attaches, "@[src/a.go]" or "@[/notes/plan.md:L14-L78]", is
//     also a file part naming it (path and lines; Windsurf does not
//     write the content), while a terminal or a workflow mentioned
//     ("@[TerminalName: …]", "@[/review]") stays text. Windsurf
//     writes what its review policy sends in the user's place ("This
//     is a system-generated message …") the same way: a system message.
//   - "### Planner Response": Cascade's reply, an assistant message.
//     Two user inputs in a row (a turn stopped before its reply) are
//     two user messages.
//   - a step, one line in italics between the text, for each tool call
//     Cascade made: "*Viewed [a.go](file:///src/a.go) *",
//     "*User accepted the command `go test`*", "*Edited relevant file*",
//     "*Grep searched codebase*", "*Listed directory [src](file:///src) *",
//     "*Searched web for …*", "*Read URL content from … *", "*Running MCP
//     tool*" and others. Each is a tool part of the message it is in, in
//     order with the text around it, named after its verb (view,
//     analyze, edit, list_dir, run_command, command_status,
//     read_terminal, grep_search, codebase_search, find_by_name,
//     search_web, read_url_content, read_resource, list_resources,
//     mcp_tool, todo_list, browser_preview, open_browser_url,
//     list_browser_pages, read_browser_page, view_content_chunk,
//     view_code_item, generate_image, propose_code), its input the path
//     (a file URI made a plain path), command, query or URL the line
//     names. It is completed; a command the user rejected is an error.
//     Steps right after a user input, before any response heading, are
//     an assistant message of their own.
//
// A reply's own headings ("### Summary"), italics and everything inside
// a fenced code block are its text: only the two turn headings outside a
// code block start a turn, so a fence that quotes "### User Input" stays
// in its message. A fence still open at the end of the file (a reply
// cut short in its code) never was one: the headings met inside it are
// read as headings. Links into Windsurf's code index,
// "[a.go](cci:7://file:///src/a.go:0:0-0:0)", are rewritten to the
// file's plain path, "[a.go](/src/a.go)", so that they read and search
// as paths. CRLF line endings and a byte-order mark are read as well.
//
// # The session
//
// One session per file. Its source id is the first 16 hex digits of
// SHA-256 of the file's name and the first 512 bytes of its first
// turn's text, so a conversation downloaded again over the same file, or
// moved to another directory, is the same session, which grows by the
// turns it gained; saved under another name ("… (1).md") it is another.
// (Only the start of the first turn: a file read while it is written
// has its first bytes whole, and keys the same session.) A message's id
// is the session's and its place in the file, so what an earlier import
// stored keeps its id and only what is new is added. Its title is the
// front matter's, else the first prompt. Its working directory is the
// front matter's workspace, else the deepest directory that holds every
// local path the trajectory names (in steps and code-index links,
// leaving out the agents' own data under .gemini, .codeium and
// .windsurf), else none.
//
// A trajectory records no time: every message, and the session, have
// the file's modification time, and the order is the file's.
//
// Not in a trajectory, so not imported: the model and provider, token
// usage, reasoning, the tools' outputs and arguments beyond the one the
// step line names (what a grep searched for, what an edit changed),
// checkpoints and memories. Text between the header and the first
// turn is counted as before-first-turn; a turn under a "###" heading of
// a kind this reader does not know, before the first known one, as
// unknown:<heading>; after the first turn such a line is the text of the
// turn it is in, since replies use those headings too. A turn with
// nothing in it is counted as empty-input or empty-response.
//
// # Windsurf or Antigravity
//
// Antigravity writes the same header, headings and steps, and nothing
// in a file says which of the two wrote it for certain; a marker that
// only some of a conversation's turns hold would give a file that grew
// another tool's name, and its session another key. So both are read
// as windsurf.
//
// # Versions
//
// The format was learnt from trajectories that users of Windsurf and
// Antigravity published; the fixtures in testdata are written by hand
// to it (none of those files is copied).
package windsurf
