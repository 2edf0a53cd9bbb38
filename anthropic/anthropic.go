// Package anthropic implements loom.Provider on the Anthropic Messages API.
// It speaks the one endpoint loom calls over net/http, with the retries of
// the official SDK (docs/architecture.md says why not through the SDK).
//
// Replies are streamed. Thinking blocks become reasoning parts whose
// Metadata keeps the block's signature ({"signature": "..."}; a redacted
// block keeps {"redacted_data": "..."}), and they are sent back on later
// turns while thinking is on, as the API requires around tool use. System
// messages go to the system parameter; tool results go in a user message
// as tool_result blocks; consecutive messages of one role are merged, since
// the API wants user and assistant turns to alternate.
//
// Prompt caching is asked for with two breakpoints: the end of the system
// prompt (which covers the tools) and the end of the conversation, so the
// next call of a session reads what this one wrote.
//
// Usage follows loom's convention, which is also Anthropic's: InputTokens
// exclude cache reads and writes; OutputTokens include thinking tokens.
package anthropic

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/modelcall"
)

// DefaultBaseURL is Anthropic's API.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxRetries is how often a failed call is retried when Config
// leaves MaxRetries at zero.
const DefaultMaxRetries = 2

// DefaultMaxTokens caps a reply when the request sets no limit; with
// thinking on the cap is twice this, half of it for thinking.
const DefaultMaxTokens = 8192

// MinThinkingBudget is the smallest thinking budget the API accepts.
const MinThinkingBudget = 1024

// Config configures a Provider. Nothing is read from the environment:
// callers pass ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL in.
type Config struct {
	APIKey string
	// BaseURL is the API root without /v1. Empty means DefaultBaseURL.
	BaseURL string
	// HTTPClient makes the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// MaxRetries is how often a request that failed with a connection
	// error, 408, 409, 429 or 5xx is retried, with exponential backoff
	// that honours Retry-After. Zero means DefaultMaxRetries; negative
	// means never.
	MaxRetries int
}

var _ loom.Provider = (*Provider)(nil)

// Provider is a loom.Provider for the Anthropic Messages API.
type Provider struct {
	endpoint modelcall.Endpoint
}

// APIVersion is the anthropic-version every request names.
const APIVersion = "2026-10-21"

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	h := http.Header{
		"Content-Type":      {"application/json"},
		"Accept":            {"application/json"},
		"Anthropic-Version": {APIVersion},
	}
	if cfg.APIKey != "" {
		h.Set("X-Api-Key", cfg.APIKey)
	}
	return &Provider{endpoint: modelcall.Endpoint{
		URL:           strings.TrimRight(base, "/") + "/v1/messages",
		Header:        h,
		Client:        cfg.HTTPClient,
		MaxRetries:    modelcall.Retries(cfg.MaxRetries, DefaultMaxRetries),
		AnyRetryAfter: true,
	}}
}

// Name returns "anthropic".
func (p *Provider) Name() string { return "anthropic" }

// Stream sends req and streams the reply, calling onEvent (when not nil)
// with each piece of text and thinking as it arrives, and with
// loom.EventProgress whenever bytes of the response arrive.
func (p *Provider) Stream(ctx context.Context, req *loom.ModelRequest, onEvent func(loom.StreamEvent)) (*loom.ModelResponse, error) {
	params, err := buildParams(req)
	if err != nil {
		return nil, err
	}
	res, err := p.endpoint.Send(ctx, "anthropic", params, onEvent, wrapError)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()

	st := &stream{reply: modelcall.NewReply(onEvent), blocks: map[int64]*streamBlock{}, resp: &loom.ModelResponse{Model: req.Model}}
	events := modelcall.NewEventReader(res.Body)
	var readErr error
	for readErr == nil && events.Next() {
		e := events.Event()
		switch e.Type {
		case "", "ping":
			continue
		case "error":
			readErr = apiError(res.StatusCode, e.Data)
			continue
		}
		var ev event
		if readErr = json.Unmarshal(e.Data, &ev); readErr != nil {
			continue
		}
		st.apply(&ev)
	}
	if readErr == nil {
		readErr = events.Err()
	}
	if err := modelcall.StreamEnd(ctx, "anthropic", readErr, st.complete, wrapError); err != nil {
		return nil, err
	}
	for _, b := range st.blocks {
		if p := st.reply.Part(b.part); p.Type == loom.PartReasoning && b.sig != "" {
			p.Metadata = metadata("signature", b.sig)
		}
	}
	resp := st.resp
	resp.Parts = st.reply.Parts()
	resp.Usage.APICalls = 1
	return resp, nil
}

// streamBlock is a content block of a streamed reply: its part in the
// reply, and its signature so far.
type streamBlock struct {
	part int
	sig  string
}

// stream is a reply as its events build it: its parts, by the index of
// the block each came in, the response's model, usage and stop reason,
// and whether the message ended.
type stream struct {
	reply    *modelcall.Reply
	blocks   map[int64]*streamBlock
	resp     *loom.ModelResponse
	complete bool
}

// apply adds what event ev says to the reply.
func (s *stream) apply(ev *event) {
	switch ev.Type {
	case "message_start":
		if ev.Message.Model != "" {
			s.resp.Model = ev.Message.Model
		}
		u := ev.Message.Usage
		addUsage(&s.resp.Usage, u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokensDetails.ThinkingTokens)
	case "content_block_start":
		s.start(ev)
	case "content_block_delta":
		s.delta(ev)
	case "message_delta":
		if ev.Delta.StopReason != "" {
			s.resp.StopReason = ev.Delta.StopReason
		}
		u := ev.Usage
		addUsage(&s.resp.Usage, u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokensDetails.ThinkingTokens)
	case "message_stop":
		s.complete = true
	}
}

// start begins the part of the block ev starts: text, thinking or a
// tool call; other blocks (server-side tools and the like) are not
// loom's.
func (s *stream) start(ev *event) {
	cb := ev.ContentBlock
	var part loom.Part
	switch cb.Type {
	case "text":
		part = loom.Part{Type: loom.PartText, Text: cb.Text}
	case "thinking":
		part = loom.Part{Type: loom.PartReasoning, Text: cb.Thinking}
	case "redacted_thinking":
		part = loom.Part{Type: loom.PartReasoning, Metadata: metadata("redacted_data", cb.Data)}
	case "tool_use":
		part = loom.Part{Type: loom.PartTool, CallID: cb.ID, Name: cb.Name, Status: loom.ToolPending}
	default:
		return
	}
	s.blocks[ev.Index] = &streamBlock{part: s.reply.Start(part), sig: cb.Signature}
}

// delta adds to the part of its block what ev adds: text, thinking, a
// signature or a tool call's input.
func (s *stream) delta(ev *event) {
	b := s.blocks[ev.Index]
	if b == nil {
		return
	}
	d := ev.Delta
	switch d.Type {
	case "text_delta":
		s.reply.Append(b.part, d.Text)
	case "thinking_delta":
		s.reply.Append(b.part, d.Thinking)
	case "signature_delta":
		b.sig += d.Signature
	case "input_json_delta":
		s.reply.AppendInput(b.part, d.PartialJSON)
	}
}

// addUsage folds the counts of one event into u. message_start and
// message_delta both carry counts, cumulative, and servers differ in which
// they fill in, so the larger of each is kept.
func addUsage(u *loom.Usage, in, out, cacheRead, cacheWrite, thinking int64) {
	u.InputTokens = max(u.InputTokens, in)
	u.OutputTokens = max(u.OutputTokens, out)
	u.CacheReadTokens = max(u.CacheReadTokens, cacheRead)
	u.CacheWriteTokens = max(u.CacheWriteTokens, cacheWrite)
	u.ReasoningTokens = max(u.ReasoningTokens, thinking)
}

func metadata(key, value string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{key: value})
	return b
}

// metadataValue reads one string of a part's metadata.
func metadataValue(p loom.Part, key string) string {
	var m map[string]any
	if json.Unmarshal(p.Metadata, &m) != nil {
		return ""
	}
	s, _ := m[key].(string)
	return s
}
