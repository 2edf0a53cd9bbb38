// Package codex reads the sessions of OpenAI's Codex CLI: its rollout
// files, one per session.
//
// # Where
//
// Rollouts are found under $CODEX_HOME/sessions and
// $CODEX_HOME/archived_sessions ($CODEX_HOME defaults to ~/.codex), in
// any subdirectory: every rollout-*.jsonl and rollout-*.jsonl.zst file
// (zstd-compressed) is one session. Symbolic links are followed, to
// directories (each directory is walked once) and to files. A compressed
// file whose uncompressed twin sits beside it is left out.
//
// # What is imported
//
// A rollout is a JSON line per record, {timestamp, type, payload}; the
// rollouts of versions before the envelope (a meta line, then bare
// response items) are read too.
//
//   - session_meta: the session's id, start time, working directory,
//     git branch, Codex version (cli_version) and model provider. Its
//     instructions and base_instructions become a system message at the
//     start; a developer message that repeats them is not stored again
//     (counted as developer:duplicate). forked_from_id makes the session
//     a fork of that session; a source {"subagent": {"thread_spawn":
//     {"parent_thread_id"}}} makes it a sub-agent of that session, which
//     takes precedence. Either parent is another file's session.
//   - turn_context: the model of the turn (the session's model is that
//     of its last turn) and the working directory, which follows the
//     turns. The line is then counted as skipped.
//   - response_item messages: user input becomes a user message, except
//     the context Codex injects as user input (<environment_context>,
//     <user_instructions>, AGENTS.md instructions, <permissions …>,
//     <user_shell_command>, <turn_aborted>, <subagent_notification> and
//     the like), which becomes a system message, as do developer and
//     system messages. The IDE context an editor extension sends ahead
//     of the request ("# Context from my IDE setup: … ## My request for
//     Codex:") becomes a system message of its own before the user's
//     request. Assistant text becomes text parts. Images become file
//     parts that keep the image's type and URL, but not the bytes of an
//     image sent inline.
//   - One model call's items (reasoning, text, tool calls) form one
//     assistant message, with the outputs of its calls: a new one starts
//     after a user, system or summary message, a tool's output, a
//     turn_context or a turn's start.
//   - reasoning: its summary and any reasoning content in clear become
//     reasoning parts; reasoning kept only encrypted has no text and is
//     counted as skipped (reasoning:encrypted, or reasoning:empty).
//   - Tool calls (function_call, custom_tool_call, local_shell_call,
//     tool_search_call) and their outputs become one tool part: the
//     input object (a free-form input as {"input": text}), the output
//     text, the metadata of a shell output, the times of the call and of
//     its output. A call ends in error when its output reports a
//     non-zero exit code or failure, when a patch_apply_end or
//     exec_command_end event reports one, or, with the error
//     "interrupted", when its turn was aborted; a call without output is
//     left running. Web searches and image generations the service ran
//     are tool parts too.
//   - A spawn_agent call gets an agent part naming the sub-agent's
//     session (its thread id), from whichever record names the thread:
//     the call's output ({"agent_id"}, multi-agent v1), a
//     collab_agent_spawn_end event (new_thread_id) or a
//     sub_agent_activity event (agent_thread_id, kind started; its
//     event_id is the call's, its agent_path the task path that the
//     output of multi-agent v2, {"task_name": "/root/<name>"}, gives),
//     or, since Codex 0.169, an item_completed event whose item is a
//     SubAgentActivity (the same fields, its id the call's).
//     A v2 parent rollout without such an event names no thread, and
//     its call has no agent part.
//   - Messages between agents: inter_agent_communication lines,
//     agent_message items ({author, recipient, content}) and assistant
//     messages whose only text is the JSON of such a message (how
//     Codex 0.1xx records one in the recipient's history). From an agent
//     above the recipient (its parent's task, a follow-up) the message
//     is a user message: a sub-agent's session starts with its task as
//     its prompt, which titles it. From any other (a sub-agent's answer
//     to its parent, a sibling's note) it is a system message. Codex's
//     envelope ("Message Type: …", "Task name: …", "Sender: …",
//     "Payload:") is left out of the text; a message whose text is only
//     encrypted is counted as skipped
//     (inter_agent_communication:encrypted). Codex 0.169 sends a
//     sub-agent's task in an encrypted_content block holding it in
//     clear: text that is not one run of base64 is read as the task.
//   - event_msg: user_message, agent_message, agent_reasoning and
//     agent_reasoning_raw_content repeat the response items and are
//     counted as skipped; one whose text no response item holds is
//     imported instead, once a line that ends its model call follows it
//     (a response item other than reasoning, a turn context, a prompt,
//     a turn's start or end): before, it is counted as skipped
//     (event_msg:<type>:pending), as Codex 0.39 writes the event before
//     the items that repeat it and a reading stopped between them would
//     start the reply at the event. token_count gives each model call's usage
//     (last_token_usage) to its assistant message: input tokens less the
//     cached ones, cached input tokens as cache reads, output tokens
//     (reasoning included) and reasoning tokens. thread_name_updated
//     gives the session's title; without one the title is empty. Every
//     other event is counted as skipped by type (event_msg:<type>).
//   - compacted: the summary becomes a summary message; without summary
//     text, the readable messages of its replacement history stand in,
//     and with none it is counted as skipped (compacted:encrypted).
//     The assistant message just before it that the summary ends with
//     (0.169 writes the answer of the call that made the summary so) is
//     that summary message, with the call's usage, not a reply. A copy
//     imported before loom read it so holds that answer as a reply and
//     the summary under the compacted line's id (Session.Replaced): it
//     keeps both, and grows from the rollout like any other copy.
//
// Messages have no id in a rollout: each takes the session id and the
// line it starts on (<session id>:<line>), its parts <message id>/<n>.
//
// # Sub-agents
//
// A sub-agent's rollout names its parent in session_meta's source. A
// spawn that forks the parent's context starts the rollout with a copy
// of the parent's history, as a fork's does (see Forks): the copy is the
// parent's and is left out of the sub-agent's session, each line counted
// as inherited:<record type>. A sub-agent whose task could not be read
// (sent encrypted) is titled with its task name, the last part of its
// agent_path, else its nickname and role, else "Sub-agent".
//
// # Forks
//
// A rollout forked from another copies the parent's history after its
// own session_meta, the parent's session_meta first. The copy is kept:
// the fork holds its whole branch, and its fork turn counts the user
// turns of the copy. The copy ends at the first turn whose id (a
// version 7 UUID) was made after the fork, or failing turn ids at the
// first line stamped after it; when neither tells, no turn is taken as
// shared. The copied session_meta is counted as skipped, and so is the
// copy's usage (inherited:event_msg:token_count), paid for in the parent.
//
// # Left out
//
// Counted as skipped: the record_type lines of old rollouts, the
// compaction and ghost_snapshot response items (opaque), messages
// without content (response_item:message:empty), developer messages
// repeating the instructions (developer:duplicate), a sub-agent's copy
// of its parent's history (inherited:<type>), turn_context,
// world_state and inter_agent_communication_metadata lines, the event
// messages above, and unknown record, item or content types
// (unknown:<type>, unknown:response_item:<type>, unknown:content:<type>).
// A turn later rolled back (thread_rolled_back, itself counted) is
// imported like any other. A malformed line is reported with its line
// number and the rest of the file is read.
//
// A compressed rollout is read up to 64 times its size (at least
// 256 MiB) of uncompressed text.
//
// Tested on the rollouts of Codex CLI 0.39 and, for the records it
// added later (forks, sub-agents, compaction, custom tools, the
// multi-agent v2 rollouts of 0.146 and 0.169), on hand-written files
// following the format of the versions since.
//
// # Writing
//
// Format is also a handoff.Writer: Handoff writes a loom session as a
// new rollout that `codex resume` continues (see its documentation and
// docs/handoff.md). A rollout whose session_meta carries loom_handoff
// (what Handoff writes) is read with that loom session as its Origin, so
// that the import makes it a fork of it.
package codex
