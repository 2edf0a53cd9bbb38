package openai

import (
	"encoding/json"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/modelcall"
)

// buildParams builds the Chat Completions request for req.
func buildParams(req *loom.ModelRequest) (chatRequest, error) {
	params := chatRequest{
		Model:         req.Model,
		Messages:      messages(req),
		StreamOptions: streamOptions{IncludeUsage: true},
		Stream:        true,
	}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = int64(req.MaxTokens)
	}
	for _, t := range req.Tools {
		schema, err := modelcall.ToolSchema("openai", t)
		if err != nil {
			return params, err
		}
		if len(schema) == 0 {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		params.Tools = append(params.Tools, tool{Type: "function", Function: function{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	return params, nil
}

// messages maps loom history to chat messages. The one system message is
// the request's system prompt, first: system messages of the history are
// not model input and are not sent (modelcall.History). Each tool call is
// answered by a tool message right after its assistant message, as the
// API requires: with the call's own result, else the result a later tool
// message carries, else "interrupted" (a call must never go unanswered).
// Results whose call is not in the history cannot be sent and are left out.
func messages(req *loom.ModelRequest) []message {
	var out []message
	if req.System != "" {
		out = append(out, message{Role: "system", Content: &req.System})
	}
	msgs := modelcall.History(req.Messages)
	results := modelcall.ResultsOf(msgs)
	for _, m := range msgs {
		switch m.Role {
		case loom.RoleUser:
			if t := m.Text(); t != "" {
				out = append(out, message{Role: "user", Content: &t})
			}
		case loom.RoleSummary:
			t := loom.SummaryPrefix + m.Text()
			out = append(out, message{Role: "user", Content: &t})
		case loom.RoleAssistant:
			a := message{Role: "assistant"}
			if t := m.Text(); t != "" {
				a.Content = &t
			}
			var calls []loom.Part
			for _, p := range m.Parts {
				if p.Type != loom.PartTool {
					continue
				}
				calls = append(calls, p)
				a.ToolCalls = append(a.ToolCalls, toolCall{
					ID:       p.CallID,
					Type:     "function",
					Function: functionCall{Name: p.Name, Arguments: argumentsText(p.Input)},
				})
			}
			if a.Content == nil && len(calls) == 0 {
				continue
			}
			out = append(out, a)
			for _, c := range calls {
				c = results.Answer(c)
				t := resultText(c)
				out = append(out, message{Role: "tool", Content: &t, ToolCallID: c.CallID})
			}
		}
	}
	return out
}

// argumentsText is the arguments string of a call: its input JSON, or the
// original text when the model's arguments were not JSON.
func argumentsText(in json.RawMessage) string {
	if len(in) == 0 || string(in) == "null" {
		return "{}"
	}
	return loom.JSONText(in)
}

// resultText is what the model is told a call returned: its output (a
// JSON string as its text, anything else as JSON), or "error: ..." when it
// failed or never finished.
func resultText(p loom.Part) string {
	text, failed := modelcall.Result(p)
	if failed {
		return "error: " + text
	}
	return text
}
