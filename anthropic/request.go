package anthropic

import (
	"encoding/json"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/modelcall"
)

// buildParams builds the Messages request for req.
func buildParams(req *loom.ModelRequest) (messagesRequest, error) {
	params := messagesRequest{Model: req.Model, Stream: true}

	mode := thinkingNone
	if req.Thinking {
		mode = thinkingFor(req.Model)
	}
	turns := history(req.Messages, mode != thinkingNone)
	if mode != thinkingNone && !thinkingFits(turns) {
		// The turn being continued was made without thinking, and the
		// API refuses thinking in the middle of such a tool-use turn.
		mode = thinkingNone
		turns = history(req.Messages, false)
	}

	maxTokens := int64(req.MaxTokens)
	switch mode {
	case thinkingBudget:
		if maxTokens <= 0 {
			maxTokens = 2 * DefaultMaxTokens
		}
		budget := max(MinThinkingBudget, maxTokens/2)
		if maxTokens <= budget {
			maxTokens = budget + MinThinkingBudget
		}
		params.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
	case thinkingAdaptive:
		if maxTokens <= 0 {
			maxTokens = 2 * DefaultMaxTokens
		}
		params.Thinking = &thinking{Type: "adaptive"}
	default:
		if maxTokens <= 0 {
			maxTokens = DefaultMaxTokens
		}
	}
	params.MaxTokens = maxTokens

	// The system prompt is the request's alone: system messages of the
	// history are not model input (see history).
	if req.System != "" {
		system := textBlock(req.System)
		system.CacheControl = ephemeral
		params.System = []block{system}
	}

	for _, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
	}

	if n := len(turns); n > 0 {
		last := &turns[n-1].blocks[len(turns[n-1].blocks)-1]
		if last.cacheable() {
			last.CacheControl = ephemeral
		}
	}
	for _, t := range turns {
		params.Messages = append(params.Messages, messageParam{Role: t.role, Content: t.blocks})
	}
	return params, nil
}

// toolParam is the API's definition of tool t: its schema's properties,
// required list and other keywords go to the input schema, whose type is
// object.
func toolParam(t loom.ToolSpec) (toolDef, error) {
	schema, err := modelcall.ToolSchema("anthropic", t)
	if err != nil {
		return toolDef{}, err
	}
	in := map[string]any{}
	for k, v := range schema {
		switch k {
		case "type", "properties", "required":
		default:
			in[k] = v
		}
	}
	in["type"] = "object"
	in["properties"] = schema["properties"]
	if in["properties"] == nil {
		in["properties"] = map[string]any{}
	}
	if required, ok := schema["required"].([]any); ok {
		var names []string
		for _, r := range required {
			if s, ok := r.(string); ok {
				names = append(names, s)
			}
		}
		if names != nil {
			in["required"] = names
		}
	}
	return toolDef{Name: t.Name, Description: t.Description, InputSchema: in}, nil
}

// turn is one message of the request: loom messages of one role in a row,
// merged.
type turn struct {
	role   string // user or assistant
	blocks []block
}

// history maps loom messages to alternating turns. System messages are
// not model input and are left out (modelcall.History). Each tool call is
// answered in the next user turn, first in it as the API requires: with the
// call's own result, else the result a later tool message carries, else
// "interrupted" (a call must never go unanswered). Results whose call is
// not in the history cannot be sent and are left out. Thinking blocks are
// sent back, with their signatures, only when thinking is on.
func history(msgs []*loom.Message, thinking bool) []turn {
	msgs = modelcall.History(msgs)
	results := modelcall.ResultsOf(msgs)
	var turns []turn
	add := func(role string, blocks ...block) {
		if len(blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].role == role {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{role: role, blocks: blocks})
	}
	for _, m := range msgs {
		switch m.Role {
		case loom.RoleUser:
			var blocks []block
			for _, p := range m.Parts {
				if p.Type == loom.PartText && p.Text != "" {
					blocks = append(blocks, textBlock(p.Text))
				}
			}
			add(loom.RoleUser, blocks...)
		case loom.RoleSummary:
			add(loom.RoleUser, textBlock(loom.SummaryPrefix+m.Text()))
		case loom.RoleAssistant:
			var blocks, answers []block
			for _, p := range m.Parts {
				switch p.Type {
				case loom.PartReasoning:
					if !thinking {
						continue
					}
					if data := metadataValue(p, "redacted_data"); data != "" {
						blocks = append(blocks, block{Type: "redacted_thinking", Data: data})
					} else if sig := metadataValue(p, "signature"); sig != "" && p.Text != "" {
						blocks = append(blocks, block{Type: "thinking", Signature: sig, Thinking: &p.Text})
					}
				case loom.PartText:
					if p.Text != "" {
						blocks = append(blocks, textBlock(p.Text))
					}
				case loom.PartTool:
					blocks = append(blocks, block{Type: "tool_use", ID: p.CallID, Input: inputObject(p.Input), Name: p.Name})
					answers = append(answers, resultBlock(results.Answer(p)))
				}
			}
			add(loom.RoleAssistant, blocks...)
			add(loom.RoleUser, answers...)
		}
	}
	return turns
}

// thinkingFits reports whether the API accepts thinking for these turns:
// when the last user turn answers tool calls, the assistant turn that made
// them must open with a thinking block.
func thinkingFits(turns []turn) bool {
	n := len(turns)
	if n < 2 || turns[n-1].role != loom.RoleUser || turns[n-1].blocks[0].Type != "tool_result" {
		return true
	}
	first := turns[n-2].blocks[0]
	return first.Type == "thinking" || first.Type == "redacted_thinking"
}

// inputObject is a call's input as the API wants it: a JSON object.
func inputObject(in json.RawMessage) json.RawMessage {
	if t := strings.TrimSpace(string(in)); strings.HasPrefix(t, "{") {
		return json.RawMessage(t)
	}
	return json.RawMessage("{}")
}

// resultBlock is the tool_result answering a call: its output (a JSON
// string as its text, anything else as JSON), or its error, flagged
// is_error, when it failed or never finished.
func resultBlock(p loom.Part) block {
	b := block{Type: "tool_result", ToolUseID: p.CallID}
	text, failed := modelcall.Result(p)
	b.IsError = failed
	if text != "" {
		b.Content = []block{textBlock(text)}
	}
	return b
}
