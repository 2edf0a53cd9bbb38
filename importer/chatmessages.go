package importer

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// chatMessage is a message of the Chat Completions API as an agent that
// keeps its conversation in that form saves it.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []ChatToolCall  `json:"tool_calls"`
}

// ChatToolCall is a tool call of a Chat Completions assistant message:
// its id, and the function called, by name, with its arguments (JSON
// in a string).
type ChatToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// ChatMessages reads raw, the Chat Completions messages file keeps
// without times, each dated at and numbered m<i> by its place: system,
// user and assistant as loom messages of their roles (an assistant's
// with model and its tool_calls), a tool message completing the call it
// answers. Problems are file's, other roles counted as skipped.
func ChatMessages(res *Result, file string, raw []json.RawMessage, at time.Time, model string) []*loom.Message {
	var out []*loom.Message
	calls := ToolCalls{}
	for i, r := range raw {
		problem := func(reason string) { res.Problemf(file, 0, "message "+strconv.Itoa(i)+": "+reason) }
		var m chatMessage
		if err := json.Unmarshal(r, &m); err != nil {
			problem(Excerpt(err.Error()))
			continue
		}
		blocks, ok := ContentBlocks(m.Content)
		if !ok && !IsNull(m.Content) {
			problem("content is neither text nor parts")
			continue
		}
		msg := &loom.Message{ID: "m" + strconv.Itoa(i), CreatedAt: at, CompletedAt: &at}
		switch m.Role {
		case "system":
			msg.Role = loom.RoleSystem
		case "user":
			msg.Role = loom.RoleUser
		case "assistant":
			msg.Role, msg.Model = loom.RoleAssistant, model
			for _, c := range m.ToolCalls {
				if c.ID == "" {
					problem("tool call without an id")
					continue
				}
				input := json.RawMessage(c.Function.Arguments)
				if !json.Valid(input) {
					input, _ = json.Marshal(c.Function.Arguments)
				}
				blocks = append(blocks, ContentBlock{Type: "tool_use", ID: c.ID, Name: c.Function.Name, Input: input})
			}
		case "tool":
			var texts []string
			for _, b := range blocks {
				if b.Type == "text" {
					texts = append(texts, b.Text)
				}
			}
			content, _ := json.Marshal(strings.Join(texts, "\n"))
			calls.AddBlocks(res, msg, []ContentBlock{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: content}}, at, problem)
			continue
		default:
			res.Skip("role:" + TypeName(m.Role))
			continue
		}
		calls.AddBlocks(res, msg, blocks, at, problem)
		if len(msg.Parts) == 0 {
			res.Skip("empty-" + msg.Role + "-message")
			continue
		}
		out = append(out, msg)
	}
	return out
}
