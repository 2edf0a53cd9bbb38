package anthropic

import (
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/modelcall"
)

// buildParams builds the Messages request for req.
func buildParams(req *loom.ModelRequest) (sdk.MessageNewParams, error) {
	params := sdk.MessageNewParams{Model: sdk.Model(req.Model)}

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
		params.Thinking = sdk.ThinkingConfigParamOfEnabled(budget)
	case thinkingAdaptive:
		if maxTokens <= 0 {
			maxTokens = 2 * DefaultMaxTokens
		}
		params.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{}}
	default:
		if maxTokens <= 0 {
			maxTokens = DefaultMaxTokens
		}
	}
	params.MaxTokens = maxTokens

	// The system prompt is the request's alone: system messages of the
	// history are not model input (see history).
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}

	for _, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}

	if n := len(turns); n > 0 {
		last := turns[n-1].blocks
		if cc := last[len(last)-1].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
		}
	}
	for _, t := range turns {
		if t.role == loom.RoleUser {
			params.Messages = append(params.Messages, sdk.NewUserMessage(t.blocks...))
		} else {
			params.Messages = append(params.Messages, sdk.NewAssistantMessage(t.blocks...))
		}
	}
	return params, nil
}

// toolParam is the API's definition of tool t: its schema's properties,
// required list and other keywords go to the input schema, whose type the
// SDK sets to object.
func toolParam(t loom.ToolSpec) (sdk.ToolParam, error) {
	schema, err := modelcall.ToolSchema("anthropic", t)
	if err != nil {
		return sdk.ToolParam{}, err
	}
	in := sdk.ToolInputSchemaParam{Properties: schema["properties"]}
	if in.Properties == nil {
		in.Properties = map[string]any{}
	}
	if required, ok := schema["required"].([]any); ok {
		for _, r := range required {
			if s, ok := r.(string); ok {
				in.Required = append(in.Required, s)
			}
		}
	}
	for k, v := range schema {
		switch k {
		case "type", "properties", "required":
		default:
			if in.ExtraFields == nil {
				in.ExtraFields = map[string]any{}
			}
			in.ExtraFields[k] = v
		}
	}
	tool := sdk.ToolParam{Name: t.Name, InputSchema: in}
	if t.Description != "" {
		tool.Description = sdk.String(t.Description)
	}
	return tool, nil
}

// turn is one message of the request: loom messages of one role in a row,
// merged.
type turn struct {
	role   string // user or assistant
	blocks []sdk.ContentBlockParamUnion
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
	add := func(role string, blocks ...sdk.ContentBlockParamUnion) {
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
			var blocks []sdk.ContentBlockParamUnion
			for _, p := range m.Parts {
				if p.Type == loom.PartText && p.Text != "" {
					blocks = append(blocks, sdk.NewTextBlock(p.Text))
				}
			}
			add(loom.RoleUser, blocks...)
		case loom.RoleSummary:
			add(loom.RoleUser, sdk.NewTextBlock(loom.SummaryPrefix+m.Text()))
		case loom.RoleAssistant:
			var blocks, answers []sdk.ContentBlockParamUnion
			for _, p := range m.Parts {
				switch p.Type {
				case loom.PartReasoning:
					if !thinking {
						continue
					}
					if data := metadataValue(p, "redacted_data"); data != "" {
						blocks = append(blocks, sdk.NewRedactedThinkingBlock(data))
					} else if sig := metadataValue(p, "signature"); sig != "" && p.Text != "" {
						blocks = append(blocks, sdk.NewThinkingBlock(sig, p.Text))
					}
				case loom.PartText:
					if p.Text != "" {
						blocks = append(blocks, sdk.NewTextBlock(p.Text))
					}
				case loom.PartTool:
					blocks = append(blocks, sdk.NewToolUseBlock(p.CallID, inputObject(p.Input), p.Name))
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
	if n < 2 || turns[n-1].role != loom.RoleUser || turns[n-1].blocks[0].OfToolResult == nil {
		return true
	}
	first := turns[n-2].blocks[0]
	return first.OfThinking != nil || first.OfRedactedThinking != nil
}

// inputObject is a call's input as the API wants it: a JSON object.
func inputObject(in json.RawMessage) any {
	if t := strings.TrimSpace(string(in)); strings.HasPrefix(t, "{") {
		return json.RawMessage(t)
	}
	return map[string]any{}
}

// resultBlock is the tool_result answering a call: its output (a JSON
// string as its text, anything else as JSON), or its error, flagged
// is_error, when it failed or never finished.
func resultBlock(p loom.Part) sdk.ContentBlockParamUnion {
	b := sdk.ToolResultBlockParam{ToolUseID: p.CallID}
	text, failed := modelcall.Result(p)
	if failed {
		b.IsError = sdk.Bool(true)
	}
	if text != "" {
		b.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: text}}}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &b}
}
