package openaitest

import (
	"fmt"
	"slices"
	"strings"
)

// validate checks a chat completion request as the real service does and
// returns its error message, or "" when the request is acceptable.
func validate(body map[string]any) string {
	if m, _ := body["model"].(string); m == "" {
		return "you must provide a model parameter"
	}
	msgs, ok := body["messages"].([]any)
	if !ok || len(msgs) == 0 {
		return "[] is too short - 'messages'"
	}
	var pending []string // tool call ids still waiting for a tool message
	for i, raw := range msgs {
		m, ok := raw.(map[string]any)
		if !ok {
			return fmt.Sprintf("Invalid type for 'messages[%d]': expected an object.", i)
		}
		role, _ := m["role"].(string)
		if len(pending) > 0 && role != "tool" {
			return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(pending, ", ")
		}
		switch role {
		case "system", "developer", "user":
			if !validContent(m["content"]) {
				return fmt.Sprintf("Invalid value for 'messages[%d].content': expected a string or an array of content parts.", i)
			}
		case "assistant":
			calls, _ := m["tool_calls"].([]any)
			if len(calls) == 0 && !validContent(m["content"]) {
				return fmt.Sprintf("Invalid value for 'messages[%d].content': expected a string, got null.", i)
			}
			for j, c := range calls {
				call, _ := c.(map[string]any)
				id, _ := call["id"].(string)
				fn, _ := call["function"].(map[string]any)
				name, _ := fn["name"].(string)
				_, isString := fn["arguments"].(string)
				if call["type"] == "custom" {
					// A call of a freeform tool (apply_patch): its input
					// is text, not arguments.
					cu, _ := call["custom"].(map[string]any)
					name, _ = cu["name"].(string)
					_, isString = cu["input"].(string)
					if id != "" && name != "" && isString {
						pending = append(pending, id)
						continue
					}
				}
				if id == "" || name == "" || !isString || call["type"] != "function" {
					return fmt.Sprintf("Invalid value for 'messages[%d].tool_calls[%d]': expected id, type \"function\", function.name and function.arguments.", i, j)
				}
				pending = append(pending, id)
			}
		case "tool":
			id, _ := m["tool_call_id"].(string)
			k := slices.Index(pending, id)
			if k < 0 {
				return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
			}
			pending = slices.Delete(pending, k, k+1)
			if !validContent(m["content"]) {
				return fmt.Sprintf("Invalid value for 'messages[%d].content': expected a string or an array of content parts.", i)
			}
		default:
			return fmt.Sprintf("Invalid value: '%v'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m["role"])
		}
	}
	if len(pending) > 0 {
		return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(pending, ", ")
	}
	return ""
}

func validContent(c any) bool {
	switch c.(type) {
	case string, []any:
		return true
	}
	return false
}
