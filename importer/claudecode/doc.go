// Package claudecode reads Claude Code's session files for the importer.
//
// Where: every <session id>.jsonl under $CLAUDE_CONFIG_DIR/projects, or
// ~/.claude/projects when that variable is not set, read together with
// the sub-agent transcripts in <session id>/subagents/ beside it (Claude
// Code 2.1). The agent-*.jsonl files that Claude Code 1.x and 2.0 keep
// beside the session files are read on their own, as sub-agent sessions
// of the session their lines name. Symbolic links are followed: a
// linked projects directory, project directory, subagents directory or
// file counts as what it leads to (each directory is walked once).
//
// What is imported:
//
//   - One session per session file, its id the file's name (the sessionId
//     of its lines when the name is not a UUID), with the working
//     directory, git branch and Claude Code version of its latest lines.
//     The title is the latest /rename title (custom-title), else the
//     latest AI title (ai-title), else the summary line whose leafUuid is
//     the latest message of the session's chain that has one; otherwise
//     it is left empty.
//   - The conversation is the parentUuid chain that ends at the newest
//     leaf. Each abandoned branch (a prompt edited or a reply regenerated
//     after a rewind) is a fork of the session, <session id>@<uuid of the
//     branch's first message of its own>, holding the whole branch and
//     forked at the last turn it shares whole. Tool results, progress and
//     hook lines hang off the main line without being branches. At most
//     1000 branches (200,000 messages in all) of a file are kept; the
//     rest are reported as a problem.
//   - User prompts are user messages. What Claude Code or a hook put in
//     the user's place is a system message: isMeta lines (a command's
//     expanded prompt, caveats), system reminders, command output, task
//     notifications, IDE context and "[Request interrupted by user]". A
//     slash command is a user message "/name args" when it went to the
//     model (/init, custom commands: an expanded prompt or a reply follows
//     it), a system message when it only ran in Claude Code (/model,
//     /mcp); local_command system lines are system messages too. Pasted
//     images and documents are file parts.
//   - An assistant reply written over several lines that share message.id
//     (thinking, text and each tool call on a line of its own) is one
//     message: its id is the uuid of its first line, its model the
//     reply's, its usage the reply's once (input, output, cache read and
//     cache write tokens; the lines repeat it, the largest count is kept).
//     Thinking becomes reasoning parts with their signature in metadata;
//     redacted thinking becomes a reasoning part holding the redacted
//     data, as loom's own Anthropic provider keeps it.
//   - A tool call and its result (from the user line that answers it) are
//     one tool part: input, output text, status completed or error
//     (is_error), start and end times, and Claude Code's structured
//     result (toolUseResult) in metadata, its members over 1 KiB left out
//     when it is larger than 8 KiB. A call without a result is running
//     when it ends the session and failed as interrupted otherwise.
//     Images in a result are file parts after the tool part.
//   - A compaction (the compact_boundary line and the summary after it)
//     is one summary message: the summary's text in a text part, the
//     boundary's compactMetadata (trigger, preTokens) in that part's
//     metadata; a boundary whose summary is missing gives the
//     boundary's own text. The /compact command and its output lines
//     are system messages, like any command that only ran in Claude
//     Code. The usage of the call that made the summary, which no line
//     holds, is what the running totals of the cost-state lines before
//     and after the boundary (2.1.330; same startTime) grew by, when
//     one model's grew and no assistant line lies between them.
//   - Sub-agents are sessions of kind subagent: each file of
//     <session>/subagents/ (<session id>/agent-<agent id>, the compaction
//     agent's agent-acompact-* included), each project-level agent-*.jsonl
//     file, each inline sub-agent transcript of Claude Code 1.x
//     (isSidechain lines, <session id>/sidechain-<uuid of its first
//     line>), and each sub-agent whose transcript is only in the
//     session file's agent_progress lines, its own file not in the
//     bundle (<session id>/agent-<agent id>, inline.go). The tool call that ran a sub-agent gets an agent part
//     linking to it: by the agentId of its result or progress lines, or,
//     for 1.x transcripts that name no call, the Task call with the same
//     prompt, else the Task call running when the transcript began. A
//     compaction's summary message links to its compaction agent. A
//     reply's parts are in the order of the records that give them:
//     an agent part, and an image of a tool's result, come after the
//     reply's calls, where the first record naming the sub-agent (its
//     result, a progress line, its first inline line) or the result
//     came, so that a reading stopped at any line holds the first parts
//     of the whole file's reading in its order. A
//     sub-agent's title is the description of the call that ran it,
//     else its first prompt; a first prompt that is raw JSON (a tool's
//     input passed on as it is) is not a title: "<subagent_type>
//     sub-agent", or "Sub-agent", stands in. A compaction agent's
//     prompt is the instructions Claude Code gives every compaction: its
//     title is "Compaction of <title of its session>" ("Compaction
//     summary" when its session file is not read with it).
//
// What is skipped and counted, by type: progress, file-history-snapshot,
// queue-operation (prompts typed while Claude Code was busy: their text
// is not imported), agent-name, last-prompt and attachment lines (but
// those of what Claude Code told the model: an instructions attachment,
// the CLAUDE.md files it read; environment; and prompt_snapshot, its
// system prompt, kept once until it changes, are system messages in
// their place, see attachments.go); the
// lines 2.1.330 writes of its own state: api-request, api-request-blob
// and api-request-shape (the requests as sent, made of the session's
// own conversation), cost-state (running totals), tools-used, mode and
// atis-latch; system
// lines other than compact_boundary and local_command
// (system:stop_hook_summary, system:turn_duration …); custom-title and
// ai-title lines a later one replaces, and summary lines whose leafUuid
// is no message of the file (1.x writes the summary of one session into
// another's file); blank text blocks (text:blank), empty thinking blocks,
// tool results that answer no call of the file or a call answered
// already, lines repeating a uuid already read, and line or block types
// the reader does not know (unknown:<type>, unknown:block:<type>). A line
// that is not a JSON object, or is longer than importer.MaxLine, is a
// problem reported with its line number; the rest of the file is still
// read.
//
// Tested on files written by Claude Code 1.0.98, 1.0.108, 2.0.28, 2.1.38
// and 2.1.39, and, for a /compact without a compaction agent's file, on
// a hand-written file of 2.1's format.
//
// # Writing
//
// Format is also a handoff.Writer: Handoff writes a loom session as a
// new Claude Code session that `claude --resume` continues (see its
// documentation and docs/handoff.md). A file whose first line carries
// loomHandoff (what Handoff writes) is read with that loom session as
// its Origin, so that the import makes it a fork of it.
package claudecode
