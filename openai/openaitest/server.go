// Package openaitest is a fake OpenAI-compatible Chat Completions server
// for tests. It speaks the real wire protocol (JSON requests, Server-Sent
// Events of chat.completion.chunk objects ending in "data: [DONE]", error
// bodies shaped like OpenAI's), so a client under test does all of its own
// parsing, and it checks requests the way the real service does: an
// assistant message's tool calls must each be answered by a tool message
// right after it, and a tool message must answer such a call.
//
// A Server is scripted with a queue of replies (Enqueue); each request takes
// the next one, and when the queue is empty the server echoes the last user
// message. Every request is recorded (Requests), with its decoded JSON body
// and its raw bytes, so a test can assert exactly what a client sent.
//
// Point a client at BaseURL (it ends in /v1, as OPENAI_BASE_URL does); the
// server also answers without the /v1 prefix.
package openaitest

import (
	"bytes"
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

// ToolCall is a function call a scripted reply makes.
type ToolCall struct {
	// ID defaults to call_<n>.
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Args is the JSON text of the arguments, streamed in pieces.
	Args string `json:"args,omitempty"`
}

// Usage is the token usage a reply reports.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	// CachedTokens goes to prompt_tokens_details.cached_tokens.
	CachedTokens int64 `json:"cached_tokens,omitempty"`
	// CacheWriteTokens goes to prompt_tokens_details.cache_write_tokens.
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	// ReasoningTokens goes to completion_tokens_details.reasoning_tokens.
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
}

// Reply scripts the answer to one request.
type Reply struct {
	Text string `json:"text,omitempty"`
	// Reasoning is streamed before the text in the delta field named by
	// ReasoningField, as vLLM, Ollama and DeepSeek-style servers do.
	Reasoning string `json:"reasoning,omitempty"`
	// ReasoningField is "reasoning_content" (the default) or "reasoning".
	ReasoningField string     `json:"reasoning_field,omitempty"`
	ToolCalls      []ToolCall `json:"tool_calls,omitempty"`
	// Usage is reported when the client asks for it; nil reports a
	// count derived from the request and reply sizes.
	Usage *Usage `json:"usage,omitempty"`
	// Model defaults to the requested model.
	Model string `json:"model,omitempty"`
	// FinishReason defaults to "tool_calls" with tool calls, else "stop".
	FinishReason string `json:"finish_reason,omitempty"`

	// Status, when 400 or more, fails this attempt with that HTTP status
	// and an OpenAI error body carrying Error (or a stock message).
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// RetryAfter is sent as retry-after-ms (and retry-after in whole
	// seconds) on retryable failures; zero lets a client retry at once.
	RetryAfter time.Duration `json:"retry_after,omitempty"`

	// Delay is waited before each streamed chunk.
	Delay time.Duration `json:"delay,omitempty"`
	// Hang streams the reasoning and text, then blocks until the client
	// goes away (or the server closes) without finishing the response.
	Hang bool `json:"hang,omitempty"`
	// Truncate streams the reasoning and text, then ends the response
	// without a finish reason or [DONE], as a dropped connection would.
	Truncate bool `json:"truncate,omitempty"`
	// StreamError streams the reasoning and text, then an error event
	// with this message.
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

// Server is a fake OpenAI-compatible server. It is safe for concurrent use.
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

// BaseURL is the URL to give a client as its base URL (OPENAI_BASE_URL):
// the server's URL followed by /v1.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

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
	s.mu.Unlock()

	path := strings.TrimPrefix(r.URL.Path, "/v1")
	switch {
	case path == "/models" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{
			"object": "list",
			"data": []any{map[string]any{
				"id": "fake-model", "object": "model", "created": 0, "owned_by": "openaitest",
			}},
		})
		return
	case path != "/chat/completions":
		writeError(w, Reply{Status: http.StatusNotFound, Error: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)})
		return
	case r.Method != http.MethodPost:
		writeError(w, Reply{Status: http.StatusMethodNotAllowed})
		return
	case req.Body == nil:
		writeError(w, Reply{Status: http.StatusBadRequest, Error: "We could not parse the JSON body of your request."})
		return
	}
	if msg := validate(req.Body); msg != "" {
		writeError(w, Reply{Status: http.StatusBadRequest, Error: msg})
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
	s.seq++
	id := fmt.Sprintf("chatcmpl-fake%d", s.seq)
	s.mu.Unlock()

	if reply.Status >= 400 {
		writeError(w, reply)
		return
	}
	c := newCompletion(id, reply, req)
	if stream, _ := req.Body["stream"].(bool); !stream {
		writeJSON(w, http.StatusOK, c.whole())
		return
	}
	s.stream(w, r, c)
}

// echo is the reply when nothing is scripted: the last user message's text.
func echo(body map[string]any) Reply {
	msgs, _ := body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] == "user" {
			if t := contentText(m["content"]); t != "" {
				return Reply{Text: "echo: " + t}
			}
		}
	}
	return Reply{Text: "echo"}
}

// contentText returns the text of a message content: a string or an array
// of text parts.
func contentText(c any) string {
	switch c := c.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if p, ok := p.(map[string]any); ok && p["type"] == "text" {
				t, _ := p["text"].(string)
				b.WriteString(t)
			}
		}
		return b.String()
	}
	return ""
}

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
		out := len(chunks(reply.Reasoning)) + len(chunks(reply.Text))
		for _, tc := range c.calls {
			out += 1 + len(pieces(tc.Args))
		}
		c.usage = Usage{PromptTokens: int64(len(req.Raw)/4 + 1), CompletionTokens: int64(out)}
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

func (s *Server) stream(w http.ResponseWriter, r *http.Request, c *completion) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Request-Id", "req_"+c.id)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	send := func(v any) bool {
		if !s.wait(r, c.reply.Delay) {
			return false
		}
		data, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
			return false
		}
		return rc.Flush() == nil
	}

	if !send(c.chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)) {
		return
	}
	for _, t := range chunks(c.reply.Reasoning) {
		if !send(c.chunk(map[string]any{c.reasoningField(): t}, nil)) {
			return
		}
	}
	for _, t := range chunks(c.reply.Text) {
		if !send(c.chunk(map[string]any{"content": t}, nil)) {
			return
		}
	}
	switch {
	case c.reply.Hang:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
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
		for _, a := range pieces(tc.Args) {
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
	fmt.Fprint(w, "data: [DONE]\n\n")
	rc.Flush()
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

// pieces splits tool arguments into short fragments that cut through
// JSON tokens, as the real service streams them.
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

// writeError answers with an OpenAI error body. Retryable statuses carry
// the retry delay headers the real service sends.
func writeError(w http.ResponseWriter, reply Reply) {
	typ, code, msg := "invalid_request_error", any(nil), reply.Error
	switch st := reply.Status; {
	case st == http.StatusUnauthorized:
		code = "invalid_api_key"
		if msg == "" {
			msg = "Incorrect API key provided."
		}
	case st == http.StatusTooManyRequests:
		typ, code = "requests", "rate_limit_exceeded"
		if msg == "" {
			msg = "Rate limit reached for requests. Please try again later."
		}
	case st >= 500:
		typ = "server_error"
		if msg == "" {
			msg = "The server had an error while processing your request. Sorry about that!"
		}
	}
	if msg == "" {
		msg = http.StatusText(reply.Status)
	}
	switch st := reply.Status; {
	case st == http.StatusRequestTimeout, st == http.StatusConflict, st == http.StatusTooManyRequests, st >= 500:
		ms := reply.RetryAfter.Milliseconds()
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(ms, 10))
		w.Header().Set("Retry-After", strconv.FormatInt((ms+999)/1000, 10))
	}
	writeJSON(w, reply.Status, map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code},
	})
}
