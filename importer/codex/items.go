package codex

import (
	"encoding/json"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// An IDE extension sends the editor's context ahead of the user's
// request, in the same message: ideContext opens it, userMessageBegin
// precedes the request itself.
const (
	ideContext       = "# Context from my IDE setup:"
	userMessageBegin = "## My request for Codex:"
)

// splitIDEContext splits a user message that carries the IDE's context
// into that context and the request.
func splitIDEContext(text string) (context, request string, ok bool) {
	t := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(t, ideContext) {
		return "", text, false
	}
	before, after, found := strings.Cut(t, userMessageBegin)
	before, after = strings.TrimSpace(before), strings.TrimSpace(after)
	if !found || before == "" || after == "" {
		return "", text, false
	}
	return before, after, true
}

// userMessage adds the user message of text at line n: a system message
// when Codex injected it, preceded by a system message of the IDE's
// context when it carries one.
func (rd *reader) userMessage(n int, text string, texts []string) *loom.Message {
	rd.endTurn()
	if text != "" && allInjected(texts) {
		return rd.message(n, loom.RoleSystem, "")
	}
	if ctx, req, ok := splitIDEContext(text); ok {
		m := rd.message(n, loom.RoleSystem, ":context")
		rd.addPart(m, loom.Part{Type: loom.PartText, Text: ctx})
		text = req
	}
	m := rd.message(n, loom.RoleUser, "")
	if text != "" {
		rd.addPart(m, loom.Part{Type: loom.PartText, Text: text})
	}
	return m
}

// injectedTags open the blocks Codex adds to the conversation as user
// input that the user did not type.
var injectedTags = map[string]bool{
	"environment_context":   true,
	"user_instructions":     true,
	"permissions":           true,
	"user_shell_command":    true,
	"turn_aborted":          true,
	"subagent_notification": true,
	"skill":                 true,
	"collaboration_mode":    true,
	"personality_spec":      true,
	"user_action":           true,
	"INSTRUCTIONS":          true,
	"apps_instructions":     true,
}

// injected reports whether text is context Codex injected: an
// environment block, instructions, a notification.
func injected(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	if strings.HasPrefix(t, "# AGENTS.md instructions for ") {
		return true
	}
	if !strings.HasPrefix(t, "<") {
		return false
	}
	t = t[1:]
	if i := strings.IndexAny(t, "> \n"); i > 0 {
		return injectedTags[t[:i]]
	}
	return false
}

// messageText joins the texts of a message's content.
func messageText(content json.RawMessage) string {
	if s := str(content); s != "" {
		return s
	}
	var b strings.Builder
	for _, c := range items(content) {
		text := c.Text
		if c.Type == "encrypted_content" {
			text = clearText(str(c.Encrypted))
		}
		if text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(text)
	}
	return b.String()
}

// clearText returns the text of an encrypted_content block when it holds
// text in clear (Codex 0.169 puts a sub-agent's task there unencrypted),
// "" when it holds a ciphertext: one run of base64 characters, long or
// starting as a Fernet token does.
func clearText(s string) string {
	s = strings.TrimSpace(s)
	if len(s) < 40 && !strings.HasPrefix(s, "gAAAAA") {
		return s
	}
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("+/-_=", c)) {
			return s
		}
	}
	return ""
}

// responseItem handles a response_item line.
func (rd *reader) responseItem(rc *rec) {
	var it responseItem
	if err := json.Unmarshal(rc.payload, &it); err != nil {
		rd.res.Problemf(rd.path, rc.n, "response_item: "+err.Error())
		return
	}
	switch it.Type {
	case "message":
		rd.responseMessage(rc.n, &it)
	case "reasoning":
		rd.reasoning(rc.n, &it)
	case "function_call":
		name := it.Name
		if it.Namespace != "" && name != "" {
			name = it.Namespace + "." + name
		}
		rd.toolCall(rc.n, it.CallID, name, argumentsInput(it.Arguments))
	case "custom_tool_call":
		rd.toolCall(rc.n, it.CallID, it.Name, textInput("input", it.Input))
	case "local_shell_call":
		rd.toolCall(rc.n, firstOf(it.CallID, it.ID), "local_shell", objectInput(it.Action))
	case "tool_search_call":
		rd.toolCall(rc.n, firstOf(it.CallID, it.ID), "tool_search", argumentsInput(it.Arguments))
	case "web_search_call":
		rd.hostedTool(rc.n, &it, "web_search", objectInput(it.Action), "")
	case "image_generation_call":
		input := json.RawMessage("{}")
		if p := str(it.RevisedPrompt); p != "" {
			input, _ = json.Marshal(map[string]string{"revised_prompt": p})
		}
		rd.hostedTool(rc.n, &it, "image_generation", input, "[image]")
	case "function_call_output", "custom_tool_call_output", "tool_search_output":
		rd.toolOutput(rc.n, &it)
	case "agent_message":
		rd.agentMessage(rc.n, str(it.Author), str(it.Recipient), messageText(it.Content))
	case "compaction", "compaction_summary", "context_compaction", "ghost_snapshot":
		rd.res.Skip("response_item:" + it.Type)
	default:
		rd.res.Skip("unknown:response_item:" + importer.TypeName(it.Type))
	}
}

// responseMessage handles a message item: user input, injected context,
// developer instructions, assistant text, or a message from another
// agent (its JSON as the item's only text).
func (rd *reader) responseMessage(n int, it *responseItem) {
	cs := items(it.Content)
	if it.Role != "user" {
		if author, recipient, text, ok := agentJSON(cs); ok {
			rd.agentMessage(n, author, recipient, text)
			return
		}
	}
	var texts []string
	var files []loom.Part
	if s := str(it.Content); s != "" {
		texts = append(texts, s)
	}
	for _, c := range cs {
		switch c.Type {
		case "input_image", "image":
			files = append(files, imagePart(str(c.ImageURL)))
		default:
			if c.Text != "" {
				texts = append(texts, c.Text)
			} else if c.Type != "input_text" && c.Type != "output_text" && c.Type != "text" {
				rd.res.Skip("unknown:content:" + importer.TypeName(c.Type))
			}
		}
	}
	if it.Role != "user" && it.Role != "assistant" && len(rd.instructions) > 0 {
		// The session_meta's instructions, sent again as a developer
		// message, are stored once.
		kept := texts[:0:0]
		for _, t := range texts {
			if !rd.instructions[strings.TrimSpace(t)] {
				kept = append(kept, t)
			}
		}
		if len(kept) == 0 && len(texts) > 0 && len(files) == 0 {
			rd.res.Skip(importer.TypeName(it.Role) + ":duplicate")
			return
		}
		texts = kept
	}
	text := strings.Join(texts, "\n")
	if strings.TrimSpace(text) == "" {
		text, texts = "", nil
	}
	if text == "" && len(files) == 0 {
		rd.res.Skip("response_item:message:empty")
		return
	}
	var m *loom.Message
	switch it.Role {
	case "user":
		m = rd.userMessage(n, text, texts)
		if m.Role == loom.RoleUser {
			text = ""
		}
	case "assistant":
		m = rd.assistant(n)
	default: // developer, system
		rd.endTurn()
		m = rd.message(n, loom.RoleSystem, "")
	}
	if text != "" {
		rd.addPart(m, loom.Part{Type: loom.PartText, Text: text})
	}
	for _, f := range files {
		rd.addPart(m, f)
	}
}

// allInjected reports whether every non-empty text is injected context.
func allInjected(texts []string) bool {
	for _, t := range texts {
		if strings.TrimSpace(t) != "" && !injected(t) {
			return false
		}
	}
	return true
}

// imagePart notes an image of a message. The image's bytes (a data URL)
// are not kept; a link to it is.
func imagePart(url string) loom.Part {
	p := loom.Part{Type: loom.PartFile, Filename: "image", Mime: "image"}
	if rest, ok := strings.CutPrefix(url, "data:"); ok {
		if i := strings.IndexAny(rest, ";,"); i > 0 && i < 100 {
			p.Mime = rest[:i]
		}
		return p
	}
	p.URL = url
	return p
}

// reasoning handles a reasoning item: its summary and any reasoning
// content in clear become reasoning parts. Encrypted reasoning has no
// text to keep.
func (rd *reader) reasoning(n int, it *responseItem) {
	var summary, content []string
	for _, c := range items(it.Summary) {
		if strings.TrimSpace(c.Text) != "" {
			summary = append(summary, c.Text)
		}
	}
	for _, c := range items(it.Content) {
		if strings.TrimSpace(c.Text) != "" {
			content = append(content, c.Text)
		}
	}
	if len(summary) == 0 && len(content) == 0 {
		if str(it.EncryptedContent) != "" {
			rd.res.Skip("reasoning:encrypted")
		} else {
			rd.res.Skip("reasoning:empty")
		}
		return
	}
	m := rd.assistant(n)
	if len(summary) > 0 {
		rd.addPart(m, loom.Part{Type: loom.PartReasoning, Text: strings.Join(summary, "\n\n")})
	}
	if len(content) > 0 {
		rd.addPart(m, loom.Part{Type: loom.PartReasoning, Text: strings.Join(content, "\n\n")})
	}
}
