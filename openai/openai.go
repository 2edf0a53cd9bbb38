// Package openai implements loom.Provider on OpenAI-compatible Chat
// Completions: OpenAI itself and the servers that speak its protocol
// (Ollama, vLLM, llama.cpp, OpenRouter, LM Studio). It speaks the one
// endpoint loom calls over net/http, with the retries of the official SDK
// (docs/architecture.md says why not through the SDK).
//
// Responses are streamed with stream_options.include_usage, so usage
// arrives in the last chunk. Reasoning is read from the reasoning_content
// (or reasoning) field that vLLM, Ollama and DeepSeek-style servers add to
// a delta; OpenAI's own models do not return their reasoning through this
// API. Reasoning is never sent back: these servers do not accept it.
//
// Usage follows loom's convention: InputTokens are the prompt tokens that
// were neither read from nor written to a cache, so InputTokens +
// CacheReadTokens + CacheWriteTokens is the service's prompt_tokens.
// OutputTokens include reasoning tokens.
package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/modelcall"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultMaxRetries is how often a failed call is retried when Config
// leaves MaxRetries at zero.
const DefaultMaxRetries = 2

// Config configures a Provider. Nothing is read from the environment:
// callers pass OPENAI_API_KEY and OPENAI_BASE_URL in.
type Config struct {
	// APIKey is sent as a bearer token; local servers need none.
	APIKey string
	// BaseURL is the API root including /v1, e.g.
	// http://127.0.0.1:11434/v1 for Ollama. Empty means DefaultBaseURL.
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

// Provider is a loom.Provider for OpenAI-compatible Chat Completions.
type Provider struct {
	endpoint modelcall.Endpoint
}

// Error is the error of a call the service answered with a failure
// status; errors.As finds it in the errors of Stream.
type Error = modelcall.StatusError

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	return &Provider{endpoint: modelcall.Endpoint{
		URL:        strings.TrimRight(base, "/") + "/chat/completions",
		Header:     h,
		Client:     cfg.HTTPClient,
		MaxRetries: modelcall.Retries(cfg.MaxRetries, DefaultMaxRetries),
	}}
}

// Name returns "openai".
func (p *Provider) Name() string { return "openai" }

// Stream sends req and streams the reply, calling onEvent (when not nil)
// with each piece of text and reasoning as it arrives, and with
// loom.EventProgress whenever bytes of the response arrive.
func (p *Provider) Stream(ctx context.Context, req *loom.ModelRequest, onEvent func(loom.StreamEvent)) (*loom.ModelResponse, error) {
	params, err := buildParams(req)
	if err != nil {
		return nil, err
	}
	res, err := p.endpoint.Send(ctx, "openai", params, onEvent, wrapError)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()

	var (
		reply   = modelcall.NewReply(onEvent)
		calls   = toolCalls{reply: reply}
		resp    = &loom.ModelResponse{Model: req.Model}
		finish  string
		events  = modelcall.NewEventReader(res.Body)
		readErr error
	)
	for readErr == nil && events.Next() {
		data := events.Event().Data
		if strings.HasPrefix(string(data), "[DONE]") {
			break
		}
		var c chunk
		if readErr = decodeChunk(data, &c); readErr != nil {
			break
		}
		if c.Model != "" {
			resp.Model = c.Model
		}
		if u := c.Usage; u.PromptTokens != 0 || u.CompletionTokens != 0 {
			resp.Usage = usage(u)
		}
		for _, choice := range c.Choices {
			if choice.Index != 0 {
				continue
			}
			d := choice.Delta
			reply.Add(loom.PartReasoning, reasoningDelta(d))
			reply.Add(loom.PartText, d.Content)
			for _, tc := range d.ToolCalls {
				calls.add(tc)
			}
			if choice.FinishReason != "" {
				finish = choice.FinishReason
			}
		}
	}
	if readErr == nil {
		readErr = events.Err()
	}
	if err := modelcall.StreamEnd(ctx, "openai", readErr, finish != "", wrapError); err != nil {
		return nil, err
	}
	resp.Parts = calls.parts()
	resp.StopReason = finish
	resp.Usage.APICalls = 1
	return resp, nil
}

// usage converts the service's counts to loom's, where input, cache-read
// and cache-write tokens do not overlap.
func usage(u completionUsage) loom.Usage {
	cached := u.PromptTokensDetails.CachedTokens
	written := u.PromptTokensDetails.CacheWriteTokens
	return loom.Usage{
		InputTokens:      max(0, u.PromptTokens-cached-written),
		OutputTokens:     u.CompletionTokens,
		ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
		CacheReadTokens:  cached,
		CacheWriteTokens: written,
	}
}

// reasoningDelta returns the reasoning text of a delta: the field is not
// part of OpenAI's schema. DeepSeek and older vLLM name it
// reasoning_content; Ollama, OpenRouter and newer vLLM name it reasoning.
func reasoningDelta(d delta) string {
	for _, raw := range []json.RawMessage{d.ReasoningContent, d.Reasoning} {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// toolCalls assembles the tool calls of a reply, which arrive as deltas
// keyed by the call's index.
type toolCalls struct {
	reply *modelcall.Reply
	index map[int64]int // tool call index → part index
}

func (c *toolCalls) add(tc toolCallDelta) {
	if c.index == nil {
		c.index = map[int64]int{}
	}
	i, ok := c.index[tc.Index]
	if !ok {
		i = c.reply.Start(loom.Part{Type: loom.PartTool, Status: loom.ToolPending})
		c.index[tc.Index] = i
	}
	p := c.reply.Part(i)
	if p.CallID == "" {
		p.CallID = tc.ID
	}
	// The name comes whole in the call's first delta; some servers repeat
	// it in every delta.
	if p.Name == "" {
		p.Name = tc.Function.Name
	}
	c.reply.AppendInput(i, tc.Function.Arguments)
}

// parts returns the reply's parts, every tool call with an id.
func (c *toolCalls) parts() []loom.Part {
	ps := c.reply.Parts()
	for _, i := range c.index {
		if ps[i].CallID == "" {
			// Some local servers leave calls without ids; results are
			// matched to calls by id, so every call needs one.
			ps[i].CallID = "call_" + strings.ReplaceAll(loom.NewID(), "-", "")
		}
	}
	return ps
}
