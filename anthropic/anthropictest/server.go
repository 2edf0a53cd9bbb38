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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/loomhq/loom/providertest"
)

// DefaultThinking is the thinking a reply streams when the request turns
// thinking on and the reply scripts none: the real service always thinks
// first when asked to.
const DefaultThinking = "Let me think about this."

// ToolCall is a tool_use block a scripted reply makes; its ID defaults to
// toolu_<n>, and its Args (the JSON text of the input object, {} when
// empty) are streamed in pieces as input_json_delta events.
type ToolCall = providertest.ToolCall

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
type Request = providertest.Request

// Signature returns the signature the server gives a thinking block with
// this text, and expects back with it.
func Signature(thinking string) string {
	sum := sha256.Sum256([]byte(thinking))
	return "sig_" + hex.EncodeToString(sum[:12])
}

// Server is a fake Anthropic Messages server. It is safe for concurrent
// use.
type Server struct {
	*providertest.Server[Reply]
}

// NewServer starts a server on a loopback port. Close it when done.
func NewServer() *Server {
	return &Server{providertest.NewServer(serve)}
}

// BaseURL is the URL to give a client as its base URL
// (ANTHROPIC_BASE_URL): the server's URL, without /v1.
func (s *Server) BaseURL() string { return s.URL }

func serve(w http.ResponseWriter, r *http.Request, x *providertest.Exchange[Reply]) {
	req, seq := x.Req, x.N
	switch {
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		providertest.WriteJSON(w, http.StatusOK, map[string]any{
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

	reply, _ := x.Take(func() Reply { return Reply{Text: providertest.Echo(req.Body)} })
	if reply.Status >= 400 {
		writeError(w, seq, reply)
		return
	}
	m := newMessage(seq, reply, req)
	if stream, _ := req.Body["stream"].(bool); !stream {
		w.Header().Set("Request-Id", m.requestID())
		providertest.WriteJSON(w, http.StatusOK, m.whole())
		return
	}
	stream(w, x, m)
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
	providertest.SetRetryAfter(w, reply.Status, reply.RetryAfter)
	id := fmt.Sprintf("req_fake%d", seq)
	w.Header().Set("Request-Id", id)
	providertest.WriteJSON(w, reply.Status, map[string]any{
		"type":       "error",
		"error":      map[string]any{"type": typ, "message": msg},
		"request_id": id,
	})
}
