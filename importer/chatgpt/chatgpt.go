package chatgpt

import "github.com/loomhq/loom/importer"

// Tool is ChatGPT's name in loom: the surface of its imported sessions
// and the TOOL of `loom session import --from TOOL`.
const Tool = "chatgpt"

// Provider is the provider of ChatGPT's replies.
const Provider = "openai"

// Format reads ChatGPT's data export: conversations.json, found below
// the PATHs named (it has no location of its own).
var Format = importer.Export{Name: Tool, Prov: Provider, Conversation: readConversation}

func init() { importer.Register(Format) }
