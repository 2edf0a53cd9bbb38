// Package claudeai reads Claude.ai's data export: the conversations.json
// of the archive that Settings → Privacy → Export data sends (the chat
// service at claude.ai, not Claude Code, whose sessions package
// claudecode reads).
//
// # Where
//
// An export is a download, so there is no default location (`--from
// all` passes Claude.ai over): `loom session import --from claude-ai
// PATH` reads PATH: the .zip archive the service sent (its
// conversations.json read as it is expanded, up to 1 GB), a
// conversations.json (whatever its name) or the
// unzipped export's directory, searched below for conversations.json
// and its numbered parts. A ChatGPT export, also named
// conversations.json, is refused with a word to use --from chatgpt.
// The file is read one conversation at a time (importer.Elements); a
// conversation over 64 MB is a problem and skipped, and an export cut
// short keeps the conversations before the cut.
//
// # What is imported
//
// Each conversation is a session: uuid is its source id, name its title
// (else its first prompt), created_at and updated_at its times, model
// its model when the export names one. Each of chat_messages is a
// message, in order, with its uuid, sender (human → user, assistant,
// system) and times (created_at; updated_at as its completion):
//
//   - content blocks: text → text parts; thinking → reasoning parts;
//     tool_use → a tool part (its id, name and input) that the
//     tool_result naming it (tool_use_id, else the tool's name) in the
//     same message completes, with its text as output and is_error as
//     an error; the blocks' start and stop times are the tool's. A
//     result without its call is a tool part of its own.
//   - a message of older exports with text and no content: a text part.
//   - attachments (pasted or uploaded text files) are file parts with
//     the file's name and type, and its extracted text as the part's
//     source text; files (images, PDFs) are file parts naming the file,
//     whose bytes the export does not hold.
//
// When an export's messages name their parents (parent_message_uuid)
// and branch (a prompt edited, a reply retried), the conversation is the
// chain that ends at current_leaf_message_uuid (else the last message),
// and every other branch is a fork of it (key claude-ai:<uuid>@<the
// branch's first message>) holding the whole branch, at the last turn
// it shares whole, as ChatGPT's branches are; past 100 branches the
// others' messages are counted as skipped (branch).
//
// Counted as skipped: other content block types (content:<type>, for
// instance token_budget), messages with nothing left (empty:<sender>),
// unknown senders, conversations without messages
// (empty-conversation). A conversation that cannot be decoded is a
// problem; the rest of the export is read. The export records no token
// usage; the cost of an imported conversation is unknown.
package claudeai
