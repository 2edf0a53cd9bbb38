// Package chatgpt reads ChatGPT's data export: the conversations.json
// of the archive that Settings → Data controls → Export data sends.
//
// # Where
//
// An export is a download, so there is no default location (`--from
// all` passes ChatGPT over): `loom session import --from chatgpt PATH`
// reads PATH: the .zip archive the service sent (its
// conversations.json read as it is expanded, up to 1 GB), a
// conversations.json (whatever its name) or the unzipped
// export's directory, searched below for conversations.json and its
// numbered parts (conversations-000.json). A Claude.ai export, also
// named conversations.json, is refused with a word to use --from
// claude-ai.
//
// The file is a JSON array of conversations, read one conversation at
// a time (importer.Elements), so that an export of hundreds of
// megabytes is never held whole as JSON; a conversation over 64 MB is
// a problem and skipped, and an export cut short keeps the
// conversations before the cut.
//
// # What is imported
//
// Each conversation is a session: its conversation_id (id in older
// exports) is the source id, its title the title, create_time and
// update_time its times, default_model_slug (else its last reply's
// model_slug) its model. Its messages form a tree (mapping: each node
// names its parent and children); the conversation is the path from the
// root to current_node (older exports without it: the newest leaf).
// Every other branch (a prompt edited, a reply regenerated) is a fork
// of the session (key chatgpt:<id>@<the branch's first node>) holding
// the whole branch, at the last turn it shares whole with the main path;
// past 100 branches in one conversation, the others' messages are
// counted as skipped (branch).
//
//   - user messages: text parts; images (image_asset_pointer) and
//     attachments (metadata.attachments) are file parts naming the file
//     (file-service://<id>); the bytes are in the export's other files,
//     not imported.
//   - assistant messages: one model turn's nodes (thoughts, tool calls,
//     the tools' results, text) form one assistant message with the
//     model of its model_slug; thoughts (o1/o3's "thoughts" content) are
//     reasoning parts, one per thought.
//   - an assistant message addressed to a tool (recipient python,
//     browser, web, dalle.text2im, a GPT's action) is a tool part: its
//     input the JSON the message holds, or {"code": …} / {"input": …};
//     the tool's message that follows (execution_output,
//     tether_browsing_display, tether_quote, images) completes it with
//     its output, system_error with an error. A tool message without a
//     call is a tool part of its own.
//   - visible system messages, and custom instructions
//     (user_editable_context) that are not hidden, are system messages.
//
// Counted as skipped: hidden messages (metadata
// is_visually_hidden_from_conversation, or weight 0: the system prompt,
// custom instructions) as hidden:<role>; reasoning_recap ("Thought for
// 5 seconds"); model_editable_context (memory); empty messages
// (empty:<role>); parts of unknown types (part:<type>); conversations
// with no message left (empty-conversation). A conversation that cannot
// be decoded is a problem; the rest of the export is read.
//
// Messages keep ChatGPT's message ids, so that importing a newer export
// of the same account adds only what is new to each conversation.
// ChatGPT records no usage in the export; the cost of an imported
// conversation is unknown.
package chatgpt
