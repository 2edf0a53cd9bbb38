package anthropictest

import (
	"fmt"
	"slices"
	"strings"
)

// validate checks a Messages request as the real service does and returns
// its error message, or "" when the request is acceptable. The checks
// run in the service's order: the first error found is the one said.
func validate(body map[string]any) string {
	if msg := validateLimits(body); msg != "" {
		return msg
	}
	breakpoints := 0
	if msg := validateSystem(body, &breakpoints); msg != "" {
		return msg
	}
	if msg := validateTools(body, &breakpoints); msg != "" {
		return msg
	}
	msgs, ok := body["messages"].([]any)
	if !ok {
		return "messages: Field required"
	}
	v := &messagesCheck{breakpoints: &breakpoints, lastCallsAt: -1}
	for i, raw := range msgs {
		if msg := v.message(i, raw); msg != "" {
			return msg
		}
	}
	if len(v.openCalls) > 0 {
		return unansweredCalls(len(msgs)-1, v.openCalls)
	}
	if msg := validateFinalThinking(body, msgs, v.lastCallsAt); msg != "" {
		return msg
	}
	if breakpoints > 4 {
		return fmt.Sprintf("A maximum of 4 blocks with cache_control may be provided. Found %d.", breakpoints)
	}
	return ""
}

// validateLimits checks the model, max_tokens and a thinking budget.
func validateLimits(body map[string]any) string {
	if m, _ := body["model"].(string); m == "" {
		return "model: Field required"
	}
	maxTokens, ok := body["max_tokens"].(float64)
	if !ok || maxTokens < 1 || maxTokens != float64(int64(maxTokens)) {
		return "max_tokens: Field required"
	}
	if th, ok := body["thinking"].(map[string]any); ok && th["type"] == "enabled" {
		budget, _ := th["budget_tokens"].(float64)
		if budget < 1024 {
			return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
		}
		if maxTokens <= budget {
			return "`max_tokens` must be greater than `thinking.budget_tokens`."
		}
	}
	return ""
}

// validateSystem checks the system prompt, counting its cache breakpoints.
func validateSystem(body map[string]any, breakpoints *int) string {
	switch sys := body["system"].(type) {
	case nil, string:
	case []any:
		for i, b := range sys {
			blk, _ := b.(map[string]any)
			if blk["type"] != "text" {
				return fmt.Sprintf("system.%d.type: Input should be 'text'", i)
			}
			if t, _ := blk["text"].(string); t == "" {
				return "system: text content blocks must be non-empty"
			}
			if blk["cache_control"] != nil {
				*breakpoints++
			}
		}
	default:
		return "system: Input should be a valid list"
	}
	return ""
}

// validateTools checks the tools, counting their cache breakpoints.
func validateTools(body map[string]any, breakpoints *int) string {
	tools, _ := body["tools"].([]any)
	for i, t := range tools {
		tool, _ := t.(map[string]any)
		if name, _ := tool["name"].(string); name == "" {
			return fmt.Sprintf("tools.%d.custom.name: Field required", i)
		}
		schema, _ := tool["input_schema"].(map[string]any)
		if schema == nil || schema["type"] != "object" {
			return fmt.Sprintf("tools.%d.custom.input_schema: Input should be an object with type \"object\"", i)
		}
		if tool["cache_control"] != nil {
			*breakpoints++
		}
	}
	return ""
}

// messagesCheck checks the messages in turn: roles alternate, each
// assistant message's tool calls are answered by the next message.
type messagesCheck struct {
	breakpoints *int
	prevRole    string
	openCalls   []string // tool_use ids of the previous assistant message
	lastCallsAt int
}

func (v *messagesCheck) message(i int, raw any) string {
	m, _ := raw.(map[string]any)
	role, _ := m["role"].(string)
	if role != "user" && role != "assistant" {
		return fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)
	}
	if role == v.prevRole {
		return fmt.Sprintf("messages: roles must alternate between \"user\" and \"assistant\", but found multiple %q roles in a row", role)
	}
	v.prevRole = role
	blocks, msg := contentBlocks(i, m["content"])
	if msg != "" {
		return msg
	}
	b := &blocksCheck{i: i, role: role, openCalls: v.openCalls}
	for j, blk := range blocks {
		if blk["cache_control"] != nil {
			*v.breakpoints++
		}
		if msg := b.block(j, blk); msg != "" {
			return msg
		}
	}
	if role == "user" {
		var missing []string
		for _, id := range v.openCalls {
			if !slices.Contains(b.answered, id) {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return unansweredCalls(i-1, missing)
		}
		v.openCalls = nil
	} else {
		v.openCalls = b.calls
		if len(b.calls) > 0 {
			v.lastCallsAt = i
		}
	}
	return ""
}

// contentBlocks is the content of message i as blocks, a string being
// one text block.
func contentBlocks(i int, content any) ([]map[string]any, string) {
	var blocks []map[string]any
	switch c := content.(type) {
	case string:
		if c == "" {
			return nil, fmt.Sprintf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		blocks = []map[string]any{{"type": "text", "text": c}}
	case []any:
		if len(c) == 0 {
			return nil, fmt.Sprintf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		for _, b := range c {
			blk, _ := b.(map[string]any)
			blocks = append(blocks, blk)
		}
	default:
		return nil, fmt.Sprintf("messages.%d.content: Input should be a valid list", i)
	}
	return blocks, ""
}

// blocksCheck checks the blocks of message i, of role, gathering the
// calls it makes and the calls of the previous message (openCalls) it
// answers.
type blocksCheck struct {
	i                          int
	role                       string
	openCalls, calls, answered []string
	seenOther                  bool
}

func (b *blocksCheck) block(j int, blk map[string]any) string {
	typ, _ := blk["type"].(string)
	where := fmt.Sprintf("messages.%d.content.%d", b.i, j)
	var msg string
	switch typ {
	case "text":
		if t, _ := blk["text"].(string); t == "" {
			return "messages: text content blocks must be non-empty"
		}
	case "image", "document":
	case "thinking", "redacted_thinking", "tool_use":
		msg = b.assistantBlock(where, typ, blk)
	case "tool_result":
		msg = b.toolResult(where, blk)
	default:
		return fmt.Sprintf("%s.type: unknown content block type %q", where, typ)
	}
	if msg != "" {
		return msg
	}
	if typ != "tool_result" {
		b.seenOther = true
	}
	return ""
}

// assistantBlock checks a block only an assistant message may hold.
func (b *blocksCheck) assistantBlock(where, typ string, blk map[string]any) string {
	if b.role != "assistant" {
		return fmt.Sprintf("%s.type: `%s` blocks are only allowed in assistant messages", where, typ)
	}
	switch typ {
	case "thinking":
		text, _ := blk["thinking"].(string)
		sig, _ := blk["signature"].(string)
		if sig == "" {
			return where + ".thinking.signature: Field required"
		}
		if sig != Signature(text) {
			return where + ": Invalid `signature` in `thinking` block"
		}
	case "redacted_thinking":
		if d, _ := blk["data"].(string); d == "" {
			return where + ".redacted_thinking.data: Field required"
		}
	case "tool_use":
		id, _ := blk["id"].(string)
		name, _ := blk["name"].(string)
		if _, isObject := blk["input"].(map[string]any); id == "" || name == "" || !isObject {
			return where + ".tool_use: id, name and an input object are required"
		}
		b.calls = append(b.calls, id)
	}
	return ""
}

// toolResult checks a tool_result block: a user message's, first in it,
// answering a call of the message before.
func (b *blocksCheck) toolResult(where string, blk map[string]any) string {
	if b.role != "user" {
		return fmt.Sprintf("%s.type: `tool_result` blocks are only allowed in user messages", where)
	}
	if b.seenOther {
		return fmt.Sprintf("messages.%d: `tool_result` blocks must come before any other content in a user message", b.i)
	}
	id, _ := blk["tool_use_id"].(string)
	if !slices.Contains(b.openCalls, id) {
		return fmt.Sprintf("%s: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", where, id)
	}
	b.answered = append(b.answered, id)
	if c, ok := blk["content"].([]any); ok {
		for _, cb := range c {
			if cb, _ := cb.(map[string]any); cb["type"] == "text" {
				if t, _ := cb["text"].(string); t == "" {
					return "messages: text content blocks must be non-empty"
				}
			}
		}
	}
	return ""
}

// unansweredCalls is the error of tool calls of message i that the next
// message does not answer.
func unansweredCalls(i int, ids []string) string {
	return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i, strings.Join(ids, ", "))
}

// validateFinalThinking: with thinking on, the assistant turn that the
// final tool results answer must open with its thinking.
func validateFinalThinking(body map[string]any, msgs []any, lastCallsAt int) string {
	if !thinkingOn(body) || lastCallsAt < 0 || lastCallsAt != len(msgs)-2 {
		return ""
	}
	m, _ := msgs[lastCallsAt].(map[string]any)
	c, _ := m["content"].([]any)
	var first map[string]any
	if len(c) > 0 {
		first, _ = c[0].(map[string]any)
	}
	if first["type"] != "thinking" && first["type"] != "redacted_thinking" {
		return fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%v`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.", lastCallsAt, first["type"])
	}
	return ""
}

// thinkingOn reports whether a request asks for thinking, with a budget
// or adaptively.
func thinkingOn(body map[string]any) bool {
	th, _ := body["thinking"].(map[string]any)
	return th["type"] == "enabled" || th["type"] == "adaptive"
}
