package openaitest

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/loomhq/loom/providertest"
)

// completion is a reply made concrete for one request.
type completion struct {
	id           string
	created      int64
	model        string
	reply        Reply
	usage        Usage
	calls        []ToolCall
	includeUsage bool
}

func newCompletion(id string, reply Reply, req Request) *completion {
	c := &completion{id: id, created: time.Now().Unix(), reply: reply}
	c.model = reply.Model
	if c.model == "" {
		c.model, _ = req.Body["model"].(string)
	}
	for i, tc := range reply.ToolCalls {
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%s_%d", strings.TrimPrefix(id, "chatcmpl-"), i)
		}
		c.calls = append(c.calls, tc)
	}
	if reply.Usage != nil {
		c.usage = *reply.Usage
	} else {
		c.usage = Usage{PromptTokens: providertest.PromptTokens(req), CompletionTokens: providertest.OutputTokens(reply.Reasoning, reply.Text, c.calls)}
	}
	if opts, ok := req.Body["stream_options"].(map[string]any); ok {
		c.includeUsage, _ = opts["include_usage"].(bool)
	}
	return c
}

func (c *completion) finishReason() string {
	switch {
	case c.reply.FinishReason != "":
		return c.reply.FinishReason
	case len(c.calls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (c *completion) reasoningField() string {
	if c.reply.ReasoningField != "" {
		return c.reply.ReasoningField
	}
	return "reasoning_content"
}

func (c *completion) usageJSON() map[string]any {
	u := c.usage
	prompt := map[string]any{"cached_tokens": u.CachedTokens, "audio_tokens": 0}
	if u.CacheWriteTokens > 0 {
		prompt["cache_write_tokens"] = u.CacheWriteTokens
	}
	return map[string]any{
		"prompt_tokens":         u.PromptTokens,
		"completion_tokens":     u.CompletionTokens,
		"total_tokens":          u.PromptTokens + u.CompletionTokens,
		"prompt_tokens_details": prompt,
		"completion_tokens_details": map[string]any{
			"reasoning_tokens":           u.ReasoningTokens,
			"audio_tokens":               0,
			"accepted_prediction_tokens": 0,
			"rejected_prediction_tokens": 0,
		},
	}
}

func (c *completion) toolCallsJSON() []any {
	var out []any
	for _, tc := range c.calls {
		out = append(out, map[string]any{
			"id":       tc.ID,
			"type":     "function",
			"function": map[string]any{"name": tc.Name, "arguments": tc.Args},
		})
	}
	return out
}

// whole is the non-streaming chat.completion object.
func (c *completion) whole() map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if c.reply.Text != "" {
		msg["content"] = c.reply.Text
	}
	if c.reply.Reasoning != "" {
		msg[c.reasoningField()] = c.reply.Reasoning
	}
	if len(c.calls) > 0 {
		msg["tool_calls"] = c.toolCallsJSON()
	}
	return map[string]any{
		"id":                 c.id,
		"object":             "chat.completion",
		"created":            c.created,
		"model":              c.model,
		"system_fingerprint": "fp_fake",
		"choices": []any{map[string]any{
			"index": 0, "message": msg, "logprobs": nil, "finish_reason": c.finishReason(),
		}},
		"usage": c.usageJSON(),
	}
}

// chunk is one chat.completion.chunk with a single choice (or none when
// delta is nil).
func (c *completion) chunk(delta map[string]any, finish any) map[string]any {
	ch := map[string]any{
		"id":                 c.id,
		"object":             "chat.completion.chunk",
		"created":            c.created,
		"model":              c.model,
		"system_fingerprint": "fp_fake",
		"choices":            []any{},
	}
	if delta != nil {
		ch["choices"] = []any{map[string]any{
			"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish,
		}}
	}
	if c.includeUsage {
		ch["usage"] = nil
	}
	return ch
}

func stream(w http.ResponseWriter, x *providertest.Exchange[Reply], c *completion) {
	w.Header().Set("X-Request-Id", "req_"+c.id)
	ev := x.StartEvents(c.reply.Delay)
	send := func(v any) bool { return ev.Send("", v) }

	if !send(c.chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)) {
		return
	}
	for _, t := range providertest.Chunks(c.reply.Reasoning) {
		if !send(c.chunk(map[string]any{c.reasoningField(): t}, nil)) {
			return
		}
	}
	for _, t := range providertest.Chunks(c.reply.Text) {
		if !send(c.chunk(map[string]any{"content": t}, nil)) {
			return
		}
	}
	switch {
	case c.reply.Hang:
		x.Hang()
		return
	case c.reply.Truncate:
		return
	case c.reply.StreamError != "":
		send(map[string]any{"error": map[string]any{
			"message": c.reply.StreamError, "type": "server_error", "param": nil, "code": nil,
		}})
		return
	}
	for i, tc := range c.calls {
		first := map[string]any{
			"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""},
		}
		if !send(c.chunk(map[string]any{"tool_calls": []any{first}}, nil)) {
			return
		}
		for _, a := range providertest.Pieces(tc.Args) {
			d := map[string]any{"index": i, "function": map[string]any{"arguments": a}}
			if !send(c.chunk(map[string]any{"tool_calls": []any{d}}, nil)) {
				return
			}
		}
	}
	if !send(c.chunk(map[string]any{}, c.finishReason())) {
		return
	}
	if c.includeUsage {
		u := c.chunk(nil, nil)
		u["usage"] = c.usageJSON()
		if !send(u) {
			return
		}
	}
	ev.Raw("", "[DONE]")
}
