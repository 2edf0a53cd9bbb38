// Package anthropictest is a fake Anthropic Messages server for tests. It
// speaks the real wire protocol (JSON requests; Server-Sent Events named
// message_start, content_block_start, content_block_delta,
// content_block_stop, message_delta, message_stop, ping and error; error
// bodies shaped like Anthropic's), so a client under test does all of its
// own parsing, and it checks requests the way the real service does: roles
// alternate, every tool_use is answered by a tool_result at the start of
// the next user message, thinking blocks come back with the signature the
// server gave them, and an extended-thinking budget fits in max_tokens.
//
// A Server is scripted with a queue of replies (Enqueue); each request takes
// the next one, and when the queue is empty the server echoes the last user
// message. Every request is recorded (Requests), with its decoded JSON body
// and its raw bytes, so a test can assert exactly what a client sent.
//
// Point a client at the server's URL (ANTHROPIC_BASE_URL has no /v1).
package anthropictest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultThinking is the thinking a reply streams when the request turns
// thinking on and the reply scripts none: the real service always thinks
// first when asked to.
const DefaultThinking = "Let me think about this."

// ToolCall is a tool_use block a scripted reply makes.
type ToolCall struct {
	// ID defaults to toolu_<n>.
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Args is the JSON text of the input object, streamed in pieces as
	// input_json_delta events.
	Args string `json:"args,omitempty"`
}

// Usage is the token usage a reply reports.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens,omitempty"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens,omitempty"`
	// ThinkingTokens goes to output_tokens_details.thinking_tokens.
	ThinkingTokens int64 `json:"thinking_tokens,omitempty"`
}

// Reply scripts the answer to one request.
type Reply struct {
	Text string `json:"text,omitempty"`
	// Reasoning is streamed as a thinking block before the text, signed
	// with Signature(Reasoning).
	Reasoning string     `json:"reasoning,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Usage nil reports a count derived from the request and reply sizes.
	Usage *Usage `json:"usage,omitempty"`
	// Model defaults to the requested model.
	Model string `json:"model,omitempty"`
	// StopReason defaults to "tool_use" with tool calls, else "end_turn".
	StopReason string `json:"stop_reason,omitempty"`

	// Status, when 400 or more, fails this attempt with that HTTP status
	// and an Anthropic error body carrying Error (or a stock message).
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// RetryAfter is sent as retry-after-ms (and retry-after in whole
	// seconds) on retryable failures; zero lets a client retry at once.
	RetryAfter time.Duration `json:"retry_after,omitempty"`

	// Delay is waited before each streamed event.
	Delay time.Duration `json:"delay,omitempty"`
	// Hang streams the thinking and text, then blocks until the client
	// goes away (or the server closes) without finishing the message.
	Hang bool `json:"hang,omitempty"`
	// Truncate streams the thinking and text, then ends the response
	// without message_stop, as a dropped connection would.
	Truncate bool `json:"truncate,omitempty"`
	// StreamError streams the thinking and text, then an error event of
	// type overloaded_error with this message.
	StreamError string `json:"stream_error,omitempty"`
}

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	// Body is the decoded JSON body, nil when the body is not JSON.
	Body map[string]any
	// Raw is the body as sent.
	Raw []byte
}

// Signature returns the signature the server gives a thinking block with
// this text, and expects back with it.
func Signature(thinking string) string {
	sum := sha256.Sum256([]byte(thinking))
	return "sig_" + hex.EncodeToString(sum[:12])
}

// Server is a fake Anthropic Messages server. It is safe for concurrent
// use.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	queue    []Reply
	requests []Request
	seq      int

	done      chan struct{}
	closeOnce sync.Once
}

// NewServer starts a server on a loopback port. Close it when done.
func NewServer() *Server {
	s := &Server{done: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the URL to give a client as its base URL
// (ANTHROPIC_BASE_URL): the server's URL, without /v1.
func (s *Server) BaseURL() string { return s.URL }

// Enqueue adds replies to the end of the script.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Queued returns how many scripted replies are still waiting.
func (s *Server) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns every request received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Close releases hanging responses, then shuts the server down.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.done) })
	s.Server.Close()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
	if len(raw) > 0 {
		var body map[string]any
		if json.Unmarshal(raw, &body) == nil {
			req.Body = body
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.seq++
	seq := s.seq
	s.mu.Unlock()

	switch {
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{
			"data": []any{map[string]any{
				"type": "model", "id": "claude-fake", "display_name": "Claude Fake", "created_at": "2025-01-01T00:00:00Z",
			}},
			"has_more": false, "first_id": "claude-fake", "last_id": "claude-fake",
		})
		return
	case r.URL.Path != "/v1/messages":
		writeError(w, seq, Reply{Status: http.StatusNotFound, Error: "Not found"})
		return
	case r.Method != http.MethodPost:
		writeError(w, seq, Reply{Status: http.StatusMethodNotAllowed})
		return
	case r.Header.Get("X-Api-Key") == "" && r.Header.Get("Authorization") == "":
		writeError(w, seq, Reply{Status: http.StatusUnauthorized, Error: "x-api-key header is required"})
		return
	case r.Header.Get("Anthropic-Version") == "":
		writeError(w, seq, Reply{Status: http.StatusBadRequest, Error: "anthropic-version: header is required"})
		return
	case req.Body == nil:
		writeError(w, seq, Reply{Status: http.StatusBadRequest, Error: "There was an error parsing the body of your request."})
		return
	}
	if msg := validate(req.Body); msg != "" {
		writeError(w, seq, Reply{Status: http.StatusBadRequest, Error: msg})
		return
	}

	s.mu.Lock()
	var reply Reply
	if len(s.queue) > 0 {
		reply = s.queue[0]
		s.queue = s.queue[1:]
	} else {
		reply = echo(req.Body)
	}
	s.mu.Unlock()

	if reply.Status >= 400 {
		writeError(w, seq, reply)
		return
	}
	m := newMessage(seq, reply, req)
	if stream, _ := req.Body["stream"].(bool); !stream {
		w.Header().Set("Request-Id", m.requestID())
		writeJSON(w, http.StatusOK, m.whole())
		return
	}
	s.stream(w, r, m)
}

// echo is the reply when nothing is scripted: the last user message's text.
func echo(body map[string]any) Reply {
	msgs, _ := body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] != "user" {
			continue
		}
		var text string
		switch c := m["content"].(type) {
		case string:
			text = c
		case []any:
			for _, b := range c {
				if b, ok := b.(map[string]any); ok && b["type"] == "text" {
					t, _ := b["text"].(string)
					text += t
				}
			}
		}
		if text != "" {
			return Reply{Text: "echo: " + text}
		}
	}
	return Reply{Text: "echo"}
}

// validate checks a Messages request as the real service does and returns
// its error message, or "" when the request is acceptable.
func validate(body map[string]any) string {
	if m, _ := body["model"].(string); m == "" {
		return "model: Field required"
	}
	maxTokens, ok := body["max_tokens"].(float64)
	if !ok || maxTokens < 1 || maxTokens != float64(int64(maxTokens)) {
		return "max_tokens: Field required"
	}
	thinking := thinkingOn(body)
	if th, ok := body["thinking"].(map[string]any); ok && th["type"] == "enabled" {
		budget, _ := th["budget_tokens"].(float64)
		if budget < 1024 {
			return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
		}
		if maxTokens <= budget {
			return "`max_tokens` must be greater than `thinking.budget_tokens`."
		}
	}
	breakpoints := 0
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
				breakpoints++
			}
		}
	default:
		return "system: Input should be a valid list"
	}
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
			breakpoints++
		}
	}

	msgs, ok := body["messages"].([]any)
	if !ok {
		return "messages: Field required"
	}
	var prevRole string
	var openCalls []string // tool_use ids of the previous assistant message
	lastCallsAt := -1
	for i, raw := range msgs {
		m, _ := raw.(map[string]any)
		role, _ := m["role"].(string)
		if role != "user" && role != "assistant" {
			return fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		if role == prevRole {
			return fmt.Sprintf("messages: roles must alternate between \"user\" and \"assistant\", but found multiple %q roles in a row", role)
		}
		prevRole = role
		var blocks []map[string]any
		switch c := m["content"].(type) {
		case string:
			if c == "" {
				return fmt.Sprintf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
			}
			blocks = []map[string]any{{"type": "text", "text": c}}
		case []any:
			if len(c) == 0 {
				return fmt.Sprintf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
			}
			for _, b := range c {
				blk, _ := b.(map[string]any)
				blocks = append(blocks, blk)
			}
		default:
			return fmt.Sprintf("messages.%d.content: Input should be a valid list", i)
		}

		var calls, answered []string
		seenOther := false
		for j, blk := range blocks {
			typ, _ := blk["type"].(string)
			if blk["cache_control"] != nil {
				breakpoints++
			}
			where := fmt.Sprintf("messages.%d.content.%d", i, j)
			switch typ {
			case "text":
				if t, _ := blk["text"].(string); t == "" {
					return "messages: text content blocks must be non-empty"
				}
			case "image", "document":
			case "thinking", "redacted_thinking", "tool_use":
				if role != "assistant" {
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
					calls = append(calls, id)
				}
			case "tool_result":
				if role != "user" {
					return fmt.Sprintf("%s.type: `tool_result` blocks are only allowed in user messages", where)
				}
				if seenOther {
					return fmt.Sprintf("messages.%d: `tool_result` blocks must come before any other content in a user message", i)
				}
				id, _ := blk["tool_use_id"].(string)
				if !slices.Contains(openCalls, id) {
					return fmt.Sprintf("%s: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", where, id)
				}
				answered = append(answered, id)
				if c, ok := blk["content"].([]any); ok {
					for _, cb := range c {
						if cb, _ := cb.(map[string]any); cb["type"] == "text" {
							if t, _ := cb["text"].(string); t == "" {
								return "messages: text content blocks must be non-empty"
							}
						}
					}
				}
			default:
				return fmt.Sprintf("%s.type: unknown content block type %q", where, typ)
			}
			if typ != "tool_result" {
				seenOther = true
			}
		}
		if role == "user" {
			var missing []string
			for _, id := range openCalls {
				if !slices.Contains(answered, id) {
					missing = append(missing, id)
				}
			}
			if len(missing) > 0 {
				return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(missing, ", "))
			}
			openCalls = nil
		} else {
			openCalls = calls
			if len(calls) > 0 {
				lastCallsAt = i
			}
		}
	}
	if len(openCalls) > 0 {
		return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", len(msgs)-1, strings.Join(openCalls, ", "))
	}
	// With thinking on, the assistant turn that the final tool results
	// answer must open with its thinking.
	if thinking && lastCallsAt >= 0 && lastCallsAt == len(msgs)-2 {
		m, _ := msgs[lastCallsAt].(map[string]any)
		c, _ := m["content"].([]any)
		var first map[string]any
		if len(c) > 0 {
			first, _ = c[0].(map[string]any)
		}
		if first["type"] != "thinking" && first["type"] != "redacted_thinking" {
			return fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%v`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.", lastCallsAt, first["type"])
		}
	}
	if breakpoints > 4 {
		return fmt.Sprintf("A maximum of 4 blocks with cache_control may be provided. Found %d.", breakpoints)
	}
	return ""
}

// thinkingOn reports whether a request asks for thinking, with a budget
// or adaptively.
func thinkingOn(body map[string]any) bool {
	th, _ := body["thinking"].(map[string]any)
	return th["type"] == "enabled" || th["type"] == "adaptive"
}

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
		out := len(chunks(m.reasoning)) + len(chunks(reply.Text))
		for _, tc := range m.calls {
			out += 1 + len(pieces(tc.Args))
		}
		m.usage = Usage{InputTokens: int64(len(req.Raw)/4 + 1), OutputTokens: int64(out)}
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

func (s *Server) stream(w http.ResponseWriter, r *http.Request, m *message) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Request-Id", m.requestID())
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	send := func(event string, v any) bool {
		if !s.wait(r, m.reply.Delay) {
			return false
		}
		data, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
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
		for _, t := range chunks(m.reasoning) {
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
		for _, t := range chunks(m.reply.Text) {
			if !delta(index, map[string]any{"type": "text_delta", "text": t}) {
				return
			}
		}
	}
	switch {
	case m.reply.Hang:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
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
		for _, p := range pieces(tc.Args) {
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

// wait sleeps d unless the client goes away or the server closes first.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.done:
	}
	return false
}

// chunks splits text into words, each with the spaces that follow it, as a
// model streams tokens.
func chunks(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexAny(s, " \n")
		if i < 0 {
			out = append(out, s)
			break
		}
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\n') {
			j++
		}
		out = append(out, s[:j])
		s = s[j:]
	}
	return out
}

// pieces splits tool input into short fragments that cut through JSON
// tokens, as the real service streams them.
func pieces(s string) []string {
	const n = 7
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// writeError answers with an Anthropic error body. Retryable statuses
// carry the retry delay headers.
func writeError(w http.ResponseWriter, seq int, reply Reply) {
	typ, msg := "api_error", reply.Error
	switch reply.Status {
	case 400, 405:
		typ = "invalid_request_error"
	case 401:
		typ = "authentication_error"
	case 403:
		typ = "permission_error"
	case 404:
		typ = "not_found_error"
	case 413:
		typ = "request_too_large"
	case 429:
		typ = "rate_limit_error"
		if msg == "" {
			msg = "Number of request tokens has exceeded your per-minute rate limit."
		}
	case 529:
		typ = "overloaded_error"
		if msg == "" {
			msg = "Overloaded"
		}
	}
	if msg == "" {
		msg = http.StatusText(reply.Status)
		if reply.Status >= 500 {
			msg = "Internal server error"
		}
	}
	switch st := reply.Status; {
	case st == http.StatusRequestTimeout, st == http.StatusConflict, st == http.StatusTooManyRequests, st >= 500:
		ms := reply.RetryAfter.Milliseconds()
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(ms, 10))
		w.Header().Set("Retry-After", strconv.FormatInt((ms+999)/1000, 10))
	}
	id := fmt.Sprintf("req_fake%d", seq)
	w.Header().Set("Request-Id", id)
	writeJSON(w, reply.Status, map[string]any{
		"type":       "error",
		"error":      map[string]any{"type": typ, "message": msg},
		"request_id": id,
	})
}
