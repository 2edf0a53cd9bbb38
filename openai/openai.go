// Package openai implements loom.Provider on OpenAI-compatible Chat
// Completions, through the official openai-go SDK: OpenAI itself and the
// servers that speak its protocol (Ollama, vLLM, llama.cpp, OpenRouter,
// LM Studio).
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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
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
	// HTTPClient makes the requests; nil means the SDK's default.
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
	client oai.Client
}

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	retries := cfg.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(retries),
		option.WithMiddleware(normalizeErrorBody),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &Provider{client: oai.NewClient(opts...)}
}

// Name returns "openai".
func (p *Provider) Name() string { return "openai" }

// Stream sends req and streams the reply, calling onEvent (when not nil)
// with each piece of text and reasoning as it arrives.
func (p *Provider) Stream(ctx context.Context, req *loom.ModelRequest, onEvent func(loom.StreamEvent)) (*loom.ModelResponse, error) {
	params, err := buildParams(req)
	if err != nil {
		return nil, err
	}
	if onEvent == nil {
		onEvent = func(loom.StreamEvent) {}
	}

	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()

	var (
		asm    assembler
		resp   = &loom.ModelResponse{Model: req.Model}
		finish string
	)
	for stream.Next() {
		chunk := stream.Current()
		if chunk.Model != "" {
			resp.Model = chunk.Model
		}
		if u := chunk.Usage; u.PromptTokens != 0 || u.CompletionTokens != 0 {
			resp.Usage = usage(u)
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue
			}
			d := choice.Delta
			if r := reasoningDelta(d); r != "" {
				asm.add(loom.PartReasoning, r)
				onEvent(loom.StreamEvent{Kind: loom.EventReasoning, Text: r})
			}
			if d.Content != "" {
				asm.add(loom.PartText, d.Content)
				onEvent(loom.StreamEvent{Kind: loom.EventText, Text: d.Content})
			}
			for _, tc := range d.ToolCalls {
				asm.tool(tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments)
			}
			if choice.FinishReason != "" {
				finish = choice.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, wrapError(err)
	}
	if finish == "" {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errors.New("openai: the response stream ended before the reply was complete")
	}
	resp.Parts = asm.parts()
	resp.StopReason = finish
	resp.Usage.APICalls = 1
	return resp, nil
}

// usage converts the service's counts to loom's, where input, cache-read
// and cache-write tokens do not overlap.
func usage(u oai.CompletionUsage) loom.Usage {
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
// part of OpenAI's schema, so it is read from the delta's raw JSON.
// DeepSeek and older vLLM name it reasoning_content; Ollama, OpenRouter
// and newer vLLM name it reasoning.
func reasoningDelta(d oai.ChatCompletionChunkChoiceDelta) string {
	for _, name := range []string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[name]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// assembler builds the response's parts from deltas, in the order the
// model produced them.
type assembler struct {
	ps    []loom.Part
	args  map[int]*strings.Builder // part index → arguments so far
	index map[int64]int            // tool call index → part index
}

func (a *assembler) add(typ, text string) {
	if n := len(a.ps); n > 0 && a.ps[n-1].Type == typ {
		a.ps[n-1].Text += text
		return
	}
	a.ps = append(a.ps, loom.Part{Type: typ, Text: text})
}

func (a *assembler) tool(index int64, id, name, args string) {
	if a.index == nil {
		a.index = map[int64]int{}
		a.args = map[int]*strings.Builder{}
	}
	i, ok := a.index[index]
	if !ok {
		i = len(a.ps)
		a.index[index] = i
		a.args[i] = &strings.Builder{}
		a.ps = append(a.ps, loom.Part{Type: loom.PartTool, Status: loom.ToolPending})
	}
	p := &a.ps[i]
	if p.CallID == "" {
		p.CallID = id
	}
	// The name comes whole in the call's first delta; some servers repeat
	// it in every delta.
	if p.Name == "" {
		p.Name = name
	}
	a.args[i].WriteString(args)
}

func (a *assembler) parts() []loom.Part {
	for i, b := range a.args {
		a.ps[i].Input = inputJSON(b.String())
		if a.ps[i].CallID == "" {
			// Some local servers leave calls without ids; results are
			// matched to calls by id, so every call needs one.
			a.ps[i].CallID = "call_" + strings.ReplaceAll(loom.NewID(), "-", "")
		}
	}
	return a.ps
}

// inputJSON turns streamed arguments into a part's input: the arguments
// when they are JSON, {} when there are none, and otherwise the text as a
// JSON string, so a malformed call is kept and reaches the tool (which
// reports it) instead of failing the turn.
func inputJSON(args string) json.RawMessage {
	args = strings.TrimSpace(args)
	switch {
	case args == "":
		return json.RawMessage("{}")
	case json.Valid([]byte(args)):
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

// buildParams builds the Chat Completions request for req.
func buildParams(req *loom.ModelRequest) (oai.ChatCompletionNewParams, error) {
	params := oai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		Messages:      messages(req),
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = oai.Int(int64(req.MaxTokens))
	}
	for _, t := range req.Tools {
		schema := map[string]any{}
		if len(t.Schema) > 0 {
			if err := json.Unmarshal(t.Schema, &schema); err != nil || schema == nil {
				return params, fmt.Errorf("openai: tool %s: schema is not a JSON object", t.Name)
			}
		}
		if len(schema) == 0 {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fn.Description = oai.String(t.Description)
		}
		params.Tools = append(params.Tools, oai.ChatCompletionFunctionTool(fn))
	}
	return params, nil
}

// messages maps loom history to chat messages. Each tool call is answered
// by a tool message right after its assistant message, as the API
// requires: with the call's own result, else the result a later tool
// message carries, else "interrupted" (a call must never go unanswered).
// Results whose call is not in the history cannot be sent and are left out.
func messages(req *loom.ModelRequest) []oai.ChatCompletionMessageParamUnion {
	var out []oai.ChatCompletionMessageParamUnion
	if req.System != "" {
		out = append(out, oai.SystemMessage(req.System))
	}
	results := map[string]loom.Part{}
	for _, m := range req.Messages {
		if m.Role == loom.RoleTool {
			for _, p := range m.Parts {
				if p.Type == loom.PartTool && finished(p) {
					results[p.CallID] = p
				}
			}
		}
	}
	for _, m := range req.Messages {
		switch m.Role {
		case loom.RoleSystem:
			if t := m.Text(); t != "" {
				out = append(out, oai.SystemMessage(t))
			}
		case loom.RoleUser:
			if t := m.Text(); t != "" {
				out = append(out, oai.UserMessage(t))
			}
		case loom.RoleSummary:
			out = append(out, oai.UserMessage(loom.SummaryPrefix+m.Text()))
		case loom.RoleAssistant:
			var a oai.ChatCompletionAssistantMessageParam
			text := m.Text()
			if text != "" {
				a.Content.OfString = oai.String(text)
			}
			var calls []loom.Part
			for _, p := range m.Parts {
				if p.Type != loom.PartTool {
					continue
				}
				calls = append(calls, p)
				a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
						ID: p.CallID,
						Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name:      p.Name,
							Arguments: argumentsText(p.Input),
						},
					},
				})
			}
			if text == "" && len(calls) == 0 {
				continue
			}
			out = append(out, oai.ChatCompletionMessageParamUnion{OfAssistant: &a})
			for _, c := range calls {
				if r, ok := results[c.CallID]; ok && !finished(c) {
					c = r
				}
				out = append(out, oai.ToolMessage(resultText(c), c.CallID))
			}
		}
	}
	return out
}

func finished(p loom.Part) bool {
	return p.Status == loom.ToolCompleted || p.Status == loom.ToolError
}

// argumentsText is the arguments string of a call: its input JSON, or the
// original text when the model's arguments were not JSON.
func argumentsText(in json.RawMessage) string {
	if len(in) == 0 || string(in) == "null" {
		return "{}"
	}
	var s string
	if json.Unmarshal(in, &s) == nil {
		return s
	}
	return string(in)
}

// resultText is what the model is told a call returned: its output (a
// JSON string as its text, anything else as JSON), or "error: ..." when it
// failed or never finished.
func resultText(p loom.Part) string {
	switch p.Status {
	case loom.ToolCompleted:
		if len(p.Output) == 0 || string(p.Output) == "null" {
			return ""
		}
		var s string
		if json.Unmarshal(p.Output, &s) == nil {
			return s
		}
		return string(p.Output)
	case loom.ToolError:
		if p.Error == "" {
			return "error: the tool failed"
		}
		return "error: " + p.Error
	}
	return "error: " + loom.Interrupted
}

// statusError is a failed call's error: one line naming the provider and
// the HTTP status, wrapping the SDK's error (*openai.Error for an HTTP
// failure) so that errors.As finds it.
type statusError struct {
	msg string
	err error
}

func (e *statusError) Error() string { return e.msg }
func (e *statusError) Unwrap() error { return e.err }

func wrapError(err error) error {
	var apiErr *oai.Error
	if errors.As(err, &apiErr) {
		msg := strings.TrimSpace(fmt.Sprintf("openai: %d %s", apiErr.StatusCode, http.StatusText(apiErr.StatusCode)))
		detail := apiErr.Message
		if detail == "" {
			detail = apiErr.RawJSON()
		}
		if detail = oneLine(detail); detail != "" {
			msg += ": " + detail
		}
		return &statusError{msg: msg, err: err}
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		var body struct {
			Error json.RawMessage `json:"error"`
		}
		detail := string(streamErr.Event.Data)
		if json.Unmarshal(streamErr.Event.Data, &body) == nil {
			var e struct {
				Message string `json:"message"`
			}
			var s string
			switch {
			case json.Unmarshal(body.Error, &e) == nil && e.Message != "":
				detail = e.Message
			case json.Unmarshal(body.Error, &s) == nil && s != "":
				detail = s
			}
		}
		return &statusError{msg: "openai: error in the response stream: " + oneLine(detail), err: err}
	}
	return &statusError{msg: "openai: " + oneLine(err.Error()), err: err}
}

// normalizeErrorBody rewrites the body of a failed response into OpenAI's
// {"error": {"message": ...}} shape when another server answered in its
// own (Ollama's {"error": "text"}, vLLM's {"message": ...}, FastAPI's
// {"detail": ...}, a proxy's HTML page). The SDK reads only OpenAI's shape
// and would otherwise lose the status behind a JSON decoding error.
func normalizeErrorBody(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res.StatusCode < 400 || res.Body == nil {
		return res, err
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil || !bytes.HasPrefix(bytes.TrimSpace(v.Error), []byte("{")) {
		msg := strings.TrimSpace(string(body))
		for _, raw := range []json.RawMessage{v.Error, v.Message, v.Detail} {
			if len(raw) == 0 || string(raw) == "null" {
				continue
			}
			var s string
			if json.Unmarshal(raw, &s) == nil {
				msg = s
			} else {
				msg = string(raw)
			}
			break
		}
		body, _ = json.Marshal(map[string]any{"error": map[string]any{"message": msg}})
		res.Header.Set("Content-Type", "application/json")
		res.Header.Set("Content-Length", strconv.Itoa(len(body)))
		res.ContentLength = int64(len(body))
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

// oneLine folds text to a single line of bounded length.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const limit = 300
	if len(s) > limit {
		cut := limit
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
