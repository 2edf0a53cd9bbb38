// Package openhands reads, for loom's importer, the conversations
// OpenHands keeps on disk: those of its command-line agent and of
// programs built on its software agent SDK, which persist them the same
// way.
//
// # Where
//
// OpenHands keeps each conversation in a directory of its conversations
// directory (~/.openhands/conversations; $OPENHANDS_PERSISTENCE_DIR
// replaces ~/.openhands, $OPENHANDS_CONVERSATIONS_DIR the whole path),
// named by the conversation's id: base_state.json (the agent, its
// model, the workspace, and the usage of every model call) and events/,
// one JSON file per event, named in order (event-00000-<id>.json), each
// written once. PATH may be the conversations directory, a
// conversation's directory, or any of its files.
//
// # What is imported
//
//   - One session per conversation, under the state's id (else the
//     directory's name), with the workspace's working directory and
//     the agent's model (anthropic/claude-… is model claude-… of
//     provider anthropic).
//   - Events in order, each message under the event's id: a
//     MessageEvent is a prompt or a reply (its text, and its reasoning:
//     thinking blocks, else reasoning content); an ActionEvent is a
//     reply holding the action's reasoning, its thought (text) and its
//     tool call: the tool's name, the arguments the model sent (else the
//     action), completed by the ObservationEvent that names its call
//     (its text content; an observation marked is_error is an error),
//     or failed by an AgentErrorEvent or a UserRejectObservation
//     ("rejected: <reason>"). An agent error that names no call is a
//     system message.
//   - A Condensation with a summary is a summary message counting one
//     compaction.
//   - Usage: each model call's tokens in the state (token_usages) go on
//     the first reply its response made (llm_response_id); LiteLLM's
//     prompt tokens lose the cached ones, which loom counts apart.
//   - Times: the events' timestamps (ISO 8601; without an offset, this
//     machine's local time, as OpenHands writes them).
//
// # What is skipped
//
// Counted as skipped: the system prompt event, state updates, pauses,
// condensations without a summary, results folded into their calls
// ("tool-result"), results whose call is not in the conversation, and
// events of a kind not known ("unknown:<kind>"). An event file that is
// not an event is a problem; the rest is read. The conversations of
// OpenHands' earlier web server and CLI (before its SDK: the file store
// of sessions/<id>/events/<n>.json with action and observation
// records) are not read. The model call logs and the task list
// (TASKS.json) are not read.
//
// # Versions
//
// The layout was learnt from the software agent SDK's source (its
// event and conversation-state models, the CLI's locations) and from
// public tools that read it. The fixture in testdata is written by hand
// to it: a conversation with a terminal call, a failed file edit, a
// rejected call, a condensation, usage per response, an unknown event
// kind and a broken event file.
package openhands
