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
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/loomhq/loom/providertest"
)

// ToolCall is a function call a scripted reply makes; its ID defaults to
// call_<n>.
type ToolCall = providertest.ToolCall

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
type Request = providertest.Request

// Server is a fake OpenAI-compatible server. It is safe for concurrent use.
type Server struct {
	*providertest.Server[Reply]
}

// NewServer starts a server on a loopback port. Close it when done.
func NewServer() *Server {
	return &Server{providertest.NewServer(serve)}
}

// BaseURL is the URL to give a client as its base URL (OPENAI_BASE_URL):
// the server's URL followed by /v1.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

func serve(w http.ResponseWriter, r *http.Request, x *providertest.Exchange[Reply]) {
	req := x.Req
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	switch {
	case path == "/models" && r.Method == http.MethodGet:
		providertest.WriteJSON(w, http.StatusOK, map[string]any{
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

	reply, n := x.Take(func() Reply { return Reply{Text: providertest.Echo(req.Body)} })
	if reply.Status >= 400 {
		writeError(w, reply)
		return
	}
	c := newCompletion(fmt.Sprintf("chatcmpl-fake%d", n), reply, req)
	if stream, _ := req.Body["stream"].(bool); !stream {
		providertest.WriteJSON(w, http.StatusOK, c.whole())
		return
	}
	stream(w, x, c)
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
	providertest.SetRetryAfter(w, reply.Status, reply.RetryAfter)
	providertest.WriteJSON(w, reply.Status, map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code},
	})
}
