package openai

import (
	"encoding/json"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/modelcall"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
)

// buildParams builds the Chat Completions request for req.
func buildParams(req *loom.ModelRequest) (oai.ChatCompletionNewParams, error) {
	params := oai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		Messages:      messages(req),
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = oai.Int(int64(req.MaxTokens))
	}
	for _, t := range req.Tools {
		schema, err := modelcall.ToolSchema("openai", t)
		if err != nil {
			return params, err
		}
		if len(schema) == 0 {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fn.Description = oai.String(t.Description)
		}
		params.Tools = append(params.Tools, oai.ChatCompletionFunctionTool(fn))
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
func messages(req *loom.ModelRequest) []oai.ChatCompletionMessageParamUnion {
	var out []oai.ChatCompletionMessageParamUnion
	if req.System != "" {
		out = append(out, oai.SystemMessage(req.System))
	}
	msgs := modelcall.History(req.Messages)
	results := modelcall.ResultsOf(msgs)
	for _, m := range msgs {
		switch m.Role {
		case loom.RoleUser:
			if t := m.Text(); t != "" {
				out = append(out, oai.UserMessage(t))
			}
		case loom.RoleSummary:
			out = append(out, oai.UserMessage(loom.SummaryPrefix+m.Text()))
		case loom.RoleAssistant:
			var a oai.ChatCompletionAssistantMessageParam
			text := m.Text()
			if text != "" {
				a.Content.OfString = oai.String(text)
			}
			var calls []loom.Part
			for _, p := range m.Parts {
				if p.Type != loom.PartTool {
					continue
				}
				calls = append(calls, p)
				a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
						ID: p.CallID,
						Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name:      p.Name,
							Arguments: argumentsText(p.Input),
						},
					},
				})
			}
			if text == "" && len(calls) == 0 {
				continue
			}
			out = append(out, oai.ChatCompletionMessageParamUnion{OfAssistant: &a})
			for _, c := range calls {
				c = results.Answer(c)
				out = append(out, oai.ToolMessage(resultText(c), c.CallID))
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
