package anthropictest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/loomhq/loom/providertest"
)

// message is a reply made concrete for one request.
type message struct {
	id         string
	seq        int
	model      string
	reply      Reply
	reasoning  string
	calls      []ToolCall
	usage      Usage
	stopReason string
}

func newMessage(seq int, reply Reply, req Request) *message {
	m := &message{id: fmt.Sprintf("msg_fake%d", seq), seq: seq, reply: reply, reasoning: reply.Reasoning}
	m.model = reply.Model
	if m.model == "" {
		m.model, _ = req.Body["model"].(string)
	}
	if thinkingOn(req.Body) && m.reasoning == "" {
		m.reasoning = DefaultThinking
	}
	for i, tc := range reply.ToolCalls {
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("toolu_fake%d_%d", seq, i)
		}
		if tc.Args == "" {
			tc.Args = "{}"
		}
		m.calls = append(m.calls, tc)
	}
	m.stopReason = reply.StopReason
	if m.stopReason == "" {
		m.stopReason = "end_turn"
		if len(m.calls) > 0 {
			m.stopReason = "tool_use"
		}
	}
	if reply.Usage != nil {
		m.usage = *reply.Usage
	} else {
		m.usage = Usage{InputTokens: providertest.PromptTokens(req), OutputTokens: providertest.OutputTokens(m.reasoning, reply.Text, m.calls)}
	}
	return m
}

func (m *message) requestID() string { return fmt.Sprintf("req_fake%d", m.seq) }

func (m *message) usageJSON(outputTokens int64) map[string]any {
	return map[string]any{
		"input_tokens":                m.usage.InputTokens,
		"cache_creation_input_tokens": m.usage.CacheCreationInputTokens,
		"cache_read_input_tokens":     m.usage.CacheReadInputTokens,
		"output_tokens":               outputTokens,
		"output_tokens_details":       map[string]any{"thinking_tokens": m.usage.ThinkingTokens},
		"service_tier":                "standard",
	}
}

// whole is the non-streaming message object.
func (m *message) whole() map[string]any {
	content := []any{}
	if m.reasoning != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": m.reasoning, "signature": Signature(m.reasoning)})
	}
	if m.reply.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": m.reply.Text})
	}
	for _, tc := range m.calls {
		var input any = map[string]any{}
		if json.Valid([]byte(tc.Args)) {
			input = json.RawMessage(tc.Args)
		}
		content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": input})
	}
	return map[string]any{
		"id": m.id, "type": "message", "role": "assistant", "model": m.model,
		"content": content, "stop_reason": m.stopReason, "stop_sequence": nil,
		"usage": m.usageJSON(m.usage.OutputTokens),
	}
}

func stream(w http.ResponseWriter, x *providertest.Exchange[Reply], m *message) {
	w.Header().Set("Request-Id", m.requestID())
	ev := x.StartEvents(m.reply.Delay)
	send := ev.Send
	delta := func(index int, d map[string]any) bool {
		return send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d})
	}
	start := func(index int, block map[string]any) bool {
		return send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": block})
	}
	stop := func(index int) bool {
		return send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
	}

	if !send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": m.id, "type": "message", "role": "assistant", "model": m.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": m.usageJSON(1),
	}}) {
		return
	}
	if !send("ping", map[string]any{"type": "ping"}) {
		return
	}
	index := 0
	if m.reasoning != "" {
		if !start(index, map[string]any{"type": "thinking", "thinking": "", "signature": ""}) {
			return
		}
		for _, t := range providertest.Chunks(m.reasoning) {
			if !delta(index, map[string]any{"type": "thinking_delta", "thinking": t}) {
				return
			}
		}
		if !delta(index, map[string]any{"type": "signature_delta", "signature": Signature(m.reasoning)}) || !stop(index) {
			return
		}
		index++
	}
	if m.reply.Text != "" {
		if !start(index, map[string]any{"type": "text", "text": ""}) {
			return
		}
		for _, t := range providertest.Chunks(m.reply.Text) {
			if !delta(index, map[string]any{"type": "text_delta", "text": t}) {
				return
			}
		}
	}
	switch {
	case m.reply.Hang:
		x.Hang()
		return
	case m.reply.Truncate:
		return
	case m.reply.StreamError != "":
		send("error", map[string]any{"type": "error", "error": map[string]any{
			"type": "overloaded_error", "message": m.reply.StreamError,
		}})
		return
	}
	if m.reply.Text != "" {
		if !stop(index) {
			return
		}
		index++
	}
	for _, tc := range m.calls {
		if !start(index, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}) {
			return
		}
		if !delta(index, map[string]any{"type": "input_json_delta", "partial_json": ""}) {
			return
		}
		for _, p := range providertest.Pieces(tc.Args) {
			if !delta(index, map[string]any{"type": "input_json_delta", "partial_json": p}) {
				return
			}
		}
		if !stop(index) {
			return
		}
		index++
	}
	if !send("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": m.stopReason, "stop_sequence": nil},
		"usage": m.usageJSON(m.usage.OutputTokens),
	}) {
		return
	}
	send("message_stop", map[string]any{"type": "message_stop"})
}
