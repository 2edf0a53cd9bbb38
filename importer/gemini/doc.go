// Package gemini reads Gemini CLI's chat recordings for loom's importer.
//
// # Where
//
// Gemini CLI records each session under ~/.gemini/tmp/<project>/chats/
// ($GEMINI_CLI_HOME/.gemini/tmp when GEMINI_CLI_HOME is set), where
// <project> is a hash of the project's root (older versions) or a short
// name with a .project_root file naming the root (newer ones). Each
// session is one file: session-<time>-<id prefix>.json, one JSON document
// {sessionId, projectHash, startTime, lastUpdated, messages, summary?,
// directories?, kind?} (older versions), or session-<time>-<id
// prefix>.jsonl (newer ones): a metadata line, then one line per message
// written, rewritten each time the message grows, {"$set": {...}} lines
// that update the metadata, and {"$rewindTo": id} lines that take a
// message and everything after it out of the conversation. A sub-agent's
// recording is chats/<session id>/<agent id>.jsonl, read with the session
// that ran it; a directory whose session file is gone is read alone, its
// sub-agents naming the directory as their parent. When Gemini CLI
// resumed a .json session it copied it whole into a .jsonl beside it; the
// .json is then left out. Nothing else under tmp is read (logs.json, the
// checkpoint-*.json of /chat save, shell history, tool outputs); the
// project's .project_root is read beside the recordings for their working
// directory, but is not part of any session's files, so that a session
// whose recordings did not change is not read again.
//
// The root of an import may be the directory holding .gemini (the home
// directory, or $GEMINI_CLI_HOME), ~/.gemini itself, its tmp directory, a
// project's directory, its chats directory or one recording. Symbolic
// links are followed, to directories (~/.gemini/tmp or a project's
// directory kept by a dotfile manager) and to files alike; a project
// reached twice through links is read once. Reading stops as soon as
// the import is cancelled, also in the middle of a huge one-document
// recording or of one endless line.
//
// Gemini CLI writes a one-document recording whole on every change, by
// truncating the file and writing it again in place. A read that finds
// it empty, its JSON cut short or broken, or changing while it is read,
// waits for it to change and reads it again, until 3 seconds after its
// last change; a recording still cut short then is an error.
//
// # What is imported
//
// One session per recording, keyed by its sessionId. A message keeps its
// id, the timestamp it was first recorded with and, when it was written
// several times, its last copy in the place it first appeared; what a
// later copy lacks (a copy Gemini CLI rebuilt from the model's history
// when it rewrote the conversation after a resume has no thoughts, usage,
// model or tool calls, and the time of the rewrite) is kept from the copy
// before.
//
//   - A user record is a user message with its text (and inline or
//     linked files as file parts). When the record carries what was
//     displayed (displayContent) besides what was sent, the displayed
//     text (a slash command such as /init) is the user message and the
//     text it expanded to is a system message after it (id <id>/content).
//     A record whose display holds no text was sent by the CLI, not typed
//     ("System: Please continue." after a tool): it is a system message.
//     So is Gemini CLI's session context (<session_context>, and before
//     it "This is the Gemini CLI. We are setting up the context for our
//     chat…": the date, the system, the working directory and its folder
//     structure), never a prompt or the title. A user record that opens
//     with <state_snapshot>, the summary that replaces a compressed
//     conversation, is a summary message; the gemini record right after
//     it that Gemini CLI writes itself ("Got it. Thanks for the
//     additional context!", with no thoughts, tool calls or tokens) is a
//     system message, not a reply.
//   - A gemini record is an assistant message: its thoughts (subject and
//     description) as reasoning parts, its text, and one tool part per
//     tool call with its arguments, its result's text as output, its
//     status (success → completed; error and cancelled → error, with the
//     error text; a call still running when the file was written →
//     running), the reply's time as start, the call's recorded time as
//     end, its description as title, and its display name and displayed
//     result as metadata. Function responses that arrive in a later user
//     record are folded into their call. A call that ran a sub-agent
//     (agentId) is followed by an agent part naming the sub-agent's
//     session, <session id>/<agent id>, whose recording becomes a
//     sub-agent session of the session holding that call (the abandoned
//     branch, when a rewind took the call out). The agent part names the
//     agent: the call's agent_name argument (invoke_agent,
//     delegate_to_agent), else the tool's name. Model is the record's
//     model; provider "google"; usage from tokens: input less cached
//     plus tool-use prompt tokens as input, cached as cache read, output
//     plus thoughts as output, thoughts as reasoning, one API call.
//   - info, error and warning records (what the CLI showed the user:
//     "Request cancelled.", API errors) are system messages.
//   - A $rewindTo keeps what it removed: the abandoned branch is a fork
//     session <session id>@<first removed message id> holding the shared
//     messages and the removed ones, forked at the last turn it shares
//     whole. A rewind to an id the file does not hold removes everything,
//     as Gemini CLI does.
//   - A $set of messages (Gemini CLI rewrites the list after compressing
//     or reloading the conversation) updates the messages it lists and
//     inserts the new ones (the compression summary) before the next
//     listed message already known; messages it no longer lists stay.
//     A compression writes the turn in flight again under new ids: a
//     new message of the list that repeats one of the last it leaves
//     out (a prompt with the same text, a reply with one of the same
//     call ids) is that message, moved after the summary under its
//     first id. A reply written again after a resume holds its thoughts
//     twice, as thoughts and as text parts marked thought: the text
//     parts are counted as skipped (part:thought:duplicate). The summary
//     counts one compaction in its usage.
//   - Title is the recording's summary, when Gemini CLI wrote one and it
//     is not JSON (a sub-agent's summary can be its {"response": …}). A
//     sub-agent's session whose first prompt is not text to read (a JSON
//     object of the agent's inputs, or Gemini CLI's "Get Started!") is
//     titled with its task: the prompt, task, description, objective,
//     query, request, question or instructions field of that object, else
//     of the arguments of the call that ran it, else the agent's name;
//     never with raw JSON.
//   - Cwd is the first of the recording's directories, else the
//     project's .project_root; recordings in a directory named by the
//     project's hash, without either, have no working directory (the hash
//     cannot be turned back into a path). Created and updated times are
//     startTime and lastUpdated. The recordings carry neither the CLI's
//     version nor a git branch.
//
// # What is skipped
//
// Counted as skipped: records of an unknown type ("unknown:<type>",
// "unknown:record" for a line that is no message, header, $set or
// $rewindTo), parts of a kind the record cannot hold or does not know
// ("part:<kind>"), function responses whose call is not in the
// conversation ("orphan:functionResponse"), records with nothing in them
// ("empty:<type>") and recordings without a message, or with nothing
// Gemini CLI would resume (its session context and notices alone, as in
// the recording it starts for a session it resumes), ("empty-session").
// A line that is not JSON, or a record whose fields have the wrong types,
// is a problem with its line number (the first 100 of a file are listed,
// the rest counted); the rest of the file is read. An abandoned branch
// that would make a file hold more than about one message per 64 bytes of
// it (plus 65536) is reported and not kept.
//
// # Versions
//
// Tested on a JSONL recording Gemini CLI wrote in April 2026 (replies
// from gemini-3-flash-preview and gemini-3.1-pro-preview; the file does
// not name the CLI's version) and on hand-made files, following Gemini
// CLI's chatRecordingService, for the one-document form, rewinds,
// message snapshots, a conversation rewritten after a resume or a
// compression (as Gemini CLI 0.61 writes them), and sub-agents run by invoke_agent, delegate_to_agent and an agent's own
// tool. A sub-agent recording of a version that kept it beside its parent
// as an ordinary session file (kind "subagent" in chats/) names no parent
// and is imported as a main session.
//
// # Writing
//
// Format is also a handoff.Writer: Handoff writes a loom session as a
// new recording that `gemini --resume` continues (see its documentation
// and docs/handoff.md). A recording whose header carries loomHandoff
// (what Handoff writes) is read with that loom session as its Origin, so
// that the import makes it a fork of it.
package gemini
