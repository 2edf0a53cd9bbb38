package claudeai

import "github.com/loomhq/loom/importer"

// Tool is Claude.ai's name in loom: the surface of its imported
// sessions and the TOOL of `loom session import --from TOOL`.
const Tool = "claude-ai"

// Provider is the provider of Claude.ai's replies.
const Provider = "anthropic"

// Format reads Claude.ai's data export: conversations.json, found
// below the PATHs named (it has no location of its own).
var Format = importer.Export{Name: Tool, Prov: Provider, Conversation: readConversation}

func init() { importer.Register(Format) }
