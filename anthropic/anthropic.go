// Package anthropic implements loom.Provider on the Anthropic Messages API,
// through the official anthropic-sdk-go SDK.
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
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/loomhq/loom"
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
	// HTTPClient makes the requests; nil means the SDK's default.
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
	client sdk.Client
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
		option.WithMaxRetries(retries),
	}
	if cfg.APIKey != "" {
		// A credential option keeps the SDK from looking for others in
		// the environment and in profile files.
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	} else {
		opts = append(opts, option.WithoutEnvironmentDefaults())
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &Provider{client: sdk.NewClient(opts...)}
}

// Name returns "anthropic".
func (p *Provider) Name() string { return "anthropic" }

// Stream sends req and streams the reply, calling onEvent (when not nil)
// with each piece of text and thinking as it arrives.
func (p *Provider) Stream(ctx context.Context, req *loom.ModelRequest, onEvent func(loom.StreamEvent)) (*loom.ModelResponse, error) {
	params, err := buildParams(req)
	if err != nil {
		return nil, err
	}
	if onEvent == nil {
		onEvent = func(loom.StreamEvent) {}
	}

	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()

	type block struct {
		part  int
		input strings.Builder
		sig   string
	}
	var (
		parts    []loom.Part
		blocks   = map[int64]*block{}
		resp     = &loom.ModelResponse{Model: req.Model}
		complete bool
	)
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			if ev.Message.Model != "" {
				resp.Model = ev.Message.Model
			}
			u := ev.Message.Usage
			addUsage(&resp.Usage, u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokensDetails.ThinkingTokens)
		case "content_block_start":
			cb := ev.ContentBlock
			var part loom.Part
			switch cb.Type {
			case "text":
				part = loom.Part{Type: loom.PartText, Text: cb.Text}
				if cb.Text != "" {
					onEvent(loom.StreamEvent{Kind: loom.EventText, Text: cb.Text})
				}
			case "thinking":
				part = loom.Part{Type: loom.PartReasoning, Text: cb.Thinking}
				if cb.Thinking != "" {
					onEvent(loom.StreamEvent{Kind: loom.EventReasoning, Text: cb.Thinking})
				}
			case "redacted_thinking":
				part = loom.Part{Type: loom.PartReasoning, Metadata: metadata("redacted_data", cb.Data)}
			case "tool_use":
				part = loom.Part{Type: loom.PartTool, CallID: cb.ID, Name: cb.Name, Status: loom.ToolPending}
			default:
				continue // server-side tool blocks and the like: not loom's
			}
			blocks[ev.Index] = &block{part: len(parts), sig: cb.Signature}
			parts = append(parts, part)
		case "content_block_delta":
			b := blocks[ev.Index]
			if b == nil {
				continue
			}
			d := ev.Delta
			switch d.Type {
			case "text_delta":
				parts[b.part].Text += d.Text
				onEvent(loom.StreamEvent{Kind: loom.EventText, Text: d.Text})
			case "thinking_delta":
				parts[b.part].Text += d.Thinking
				onEvent(loom.StreamEvent{Kind: loom.EventReasoning, Text: d.Thinking})
			case "signature_delta":
				b.sig += d.Signature
			case "input_json_delta":
				b.input.WriteString(d.PartialJSON)
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				resp.StopReason = string(ev.Delta.StopReason)
			}
			u := ev.Usage
			addUsage(&resp.Usage, u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokensDetails.ThinkingTokens)
		case "message_stop":
			complete = true
		}
	}
	if err := stream.Err(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, wrapError(err)
	}
	if !complete {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errors.New("anthropic: the response stream ended before the reply was complete")
	}
	for _, b := range blocks {
		p := &parts[b.part]
		switch p.Type {
		case loom.PartTool:
			p.Input = inputJSON(b.input.String())
		case loom.PartReasoning:
			if b.sig != "" {
				p.Metadata = metadata("signature", b.sig)
			}
		}
	}
	resp.Parts = parts
	resp.Usage.APICalls = 1
	return resp, nil
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

// inputJSON turns streamed input into a part's input: {} when there is
// none, and the text as a JSON string when it is not JSON, so that the call
// is kept and the tool reports the problem.
func inputJSON(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return json.RawMessage("{}")
	case json.Valid([]byte(s)):
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// thinkingMode is how a model is asked to think.
type thinkingMode int

const (
	thinkingNone     thinkingMode = iota // the model cannot think
	thinkingBudget                       // "enabled" with budget_tokens
	thinkingAdaptive                     // "adaptive": the model decides
)

// thinkingFor tells how to ask model for thinking. Models before extended
// thinking take none; the Claude 3.7 and 4 to 4.5 families take a budget;
// newer Claude models think adaptively, and the SDK warns on stderr when
// they are given a budget. Other names (models behind Anthropic-compatible
// servers) get the classic budget.
func thinkingFor(model string) thinkingMode {
	m := strings.ToLower(model)
	for _, prefix := range []string{"claude-3-5-", "claude-3-haiku", "claude-3-opus", "claude-3-sonnet", "claude-2", "claude-instant"} {
		if strings.HasPrefix(m, prefix) {
			return thinkingNone
		}
	}
	for _, prefix := range []string{"claude-3-7-sonnet", "claude-sonnet-4-5", "claude-opus-4-5", "claude-opus-4-1", "claude-haiku-4-5"} {
		if strings.HasPrefix(m, prefix) {
			return thinkingBudget
		}
	}
	// claude-sonnet-4 and claude-opus-4, bare, with a date, or as -0.
	for _, prefix := range []string{"claude-sonnet-4", "claude-opus-4"} {
		if rest, ok := strings.CutPrefix(m, prefix); ok && (rest == "" || rest == "-0" || len(rest) == 9 && rest[0] == '-' && allDigits(rest[1:])) {
			return thinkingBudget
		}
	}
	if strings.HasPrefix(m, "claude-") {
		return thinkingAdaptive
	}
	return thinkingBudget
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// buildParams builds the Messages request for req.
func buildParams(req *loom.ModelRequest) (sdk.MessageNewParams, error) {
	params := sdk.MessageNewParams{Model: sdk.Model(req.Model)}

	mode := thinkingNone
	if req.Thinking {
		mode = thinkingFor(req.Model)
	}
	turns := history(req.Messages, mode != thinkingNone)
	if mode != thinkingNone && !thinkingFits(turns) {
		// The turn being continued was made without thinking, and the
		// API refuses thinking in the middle of such a tool-use turn.
		mode = thinkingNone
		turns = history(req.Messages, false)
	}

	maxTokens := int64(req.MaxTokens)
	switch mode {
	case thinkingBudget:
		if maxTokens <= 0 {
			maxTokens = 2 * DefaultMaxTokens
		}
		budget := max(MinThinkingBudget, maxTokens/2)
		if maxTokens <= budget {
			maxTokens = budget + MinThinkingBudget
		}
		params.Thinking = sdk.ThinkingConfigParamOfEnabled(budget)
	case thinkingAdaptive:
		if maxTokens <= 0 {
			maxTokens = 2 * DefaultMaxTokens
		}
		params.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{}}
	default:
		if maxTokens <= 0 {
			maxTokens = DefaultMaxTokens
		}
	}
	params.MaxTokens = maxTokens

	if req.System != "" {
		params.System = append(params.System, sdk.TextBlockParam{Text: req.System})
	}
	for _, m := range req.Messages {
		if m.Role == loom.RoleSystem {
			if t := m.Text(); t != "" {
				params.System = append(params.System, sdk.TextBlockParam{Text: t})
			}
		}
	}
	if n := len(params.System); n > 0 {
		params.System[n-1].CacheControl = sdk.NewCacheControlEphemeralParam()
	}

	for _, t := range req.Tools {
		schema := map[string]any{}
		if len(t.Schema) > 0 {
			if err := json.Unmarshal(t.Schema, &schema); err != nil || schema == nil {
				return params, fmt.Errorf("anthropic: tool %s: schema is not a JSON object", t.Name)
			}
		}
		in := sdk.ToolInputSchemaParam{Properties: schema["properties"]}
		if in.Properties == nil {
			in.Properties = map[string]any{}
		}
		if required, ok := schema["required"].([]any); ok {
			for _, r := range required {
				if s, ok := r.(string); ok {
					in.Required = append(in.Required, s)
				}
			}
		}
		for k, v := range schema {
			switch k {
			case "type", "properties", "required":
			default:
				if in.ExtraFields == nil {
					in.ExtraFields = map[string]any{}
				}
				in.ExtraFields[k] = v
			}
		}
		tool := sdk.ToolParam{Name: t.Name, InputSchema: in}
		if t.Description != "" {
			tool.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}

	if n := len(turns); n > 0 {
		last := turns[n-1].blocks
		if cc := last[len(last)-1].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
		}
	}
	for _, t := range turns {
		if t.role == loom.RoleUser {
			params.Messages = append(params.Messages, sdk.NewUserMessage(t.blocks...))
		} else {
			params.Messages = append(params.Messages, sdk.NewAssistantMessage(t.blocks...))
		}
	}
	return params, nil
}

// turn is one message of the request: loom messages of one role in a row,
// merged.
type turn struct {
	role   string // user or assistant
	blocks []sdk.ContentBlockParamUnion
}

// history maps loom messages to alternating turns. Each tool call is
// answered in the next user turn, first in it as the API requires: with the
// call's own result, else the result a later tool message carries, else
// "interrupted" (a call must never go unanswered). Results whose call is
// not in the history cannot be sent and are left out. Thinking blocks are
// sent back, with their signatures, only when thinking is on.
func history(msgs []*loom.Message, thinking bool) []turn {
	results := map[string]loom.Part{}
	for _, m := range msgs {
		if m.Role == loom.RoleTool {
			for _, p := range m.Parts {
				if p.Type == loom.PartTool && finished(p) {
					results[p.CallID] = p
				}
			}
		}
	}
	var turns []turn
	add := func(role string, blocks ...sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].role == role {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{role: role, blocks: blocks})
	}
	for _, m := range msgs {
		switch m.Role {
		case loom.RoleUser:
			var blocks []sdk.ContentBlockParamUnion
			for _, p := range m.Parts {
				if p.Type == loom.PartText && p.Text != "" {
					blocks = append(blocks, sdk.NewTextBlock(p.Text))
				}
			}
			add(loom.RoleUser, blocks...)
		case loom.RoleSummary:
			add(loom.RoleUser, sdk.NewTextBlock(loom.SummaryPrefix+m.Text()))
		case loom.RoleAssistant:
			var blocks, answers []sdk.ContentBlockParamUnion
			for _, p := range m.Parts {
				switch p.Type {
				case loom.PartReasoning:
					if !thinking {
						continue
					}
					if data := metadataValue(p, "redacted_data"); data != "" {
						blocks = append(blocks, sdk.NewRedactedThinkingBlock(data))
					} else if sig := metadataValue(p, "signature"); sig != "" && p.Text != "" {
						blocks = append(blocks, sdk.NewThinkingBlock(sig, p.Text))
					}
				case loom.PartText:
					if p.Text != "" {
						blocks = append(blocks, sdk.NewTextBlock(p.Text))
					}
				case loom.PartTool:
					blocks = append(blocks, sdk.NewToolUseBlock(p.CallID, inputObject(p.Input), p.Name))
					if r, ok := results[p.CallID]; ok && !finished(p) {
						p = r
					}
					answers = append(answers, resultBlock(p))
				}
			}
			add(loom.RoleAssistant, blocks...)
			add(loom.RoleUser, answers...)
		}
	}
	return turns
}

// thinkingFits reports whether the API accepts thinking for these turns:
// when the last user turn answers tool calls, the assistant turn that made
// them must open with a thinking block.
func thinkingFits(turns []turn) bool {
	n := len(turns)
	if n < 2 || turns[n-1].role != loom.RoleUser || turns[n-1].blocks[0].OfToolResult == nil {
		return true
	}
	first := turns[n-2].blocks[0]
	return first.OfThinking != nil || first.OfRedactedThinking != nil
}

func finished(p loom.Part) bool {
	return p.Status == loom.ToolCompleted || p.Status == loom.ToolError
}

// inputObject is a call's input as the API wants it: a JSON object.
func inputObject(in json.RawMessage) any {
	if t := strings.TrimSpace(string(in)); strings.HasPrefix(t, "{") {
		return json.RawMessage(t)
	}
	return map[string]any{}
}

// resultBlock is the tool_result answering a call: its output (a JSON
// string as its text, anything else as JSON), or its error, flagged
// is_error, when it failed or never finished.
func resultBlock(p loom.Part) sdk.ContentBlockParamUnion {
	b := sdk.ToolResultBlockParam{ToolUseID: p.CallID}
	var text string
	switch p.Status {
	case loom.ToolCompleted:
		text = outputText(p.Output)
	case loom.ToolError:
		text = p.Error
		if text == "" {
			text = "the tool failed"
		}
		b.IsError = sdk.Bool(true)
	default:
		text = loom.Interrupted
		b.IsError = sdk.Bool(true)
	}
	if text != "" {
		b.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: text}}}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &b}
}

func outputText(out json.RawMessage) string {
	if len(out) == 0 || string(out) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(out, &s) == nil {
		return s
	}
	return string(out)
}

// statusError is a failed call's error: one line naming the provider and
// the HTTP status, wrapping the SDK's error (*anthropic.Error for an API
// failure) so that errors.As finds it.
type statusError struct {
	msg string
	err error
}

func (e *statusError) Error() string { return e.msg }
func (e *statusError) Unwrap() error { return e.err }

func wrapError(err error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		var msg string
		if apiErr.StatusCode >= 400 {
			status := http.StatusText(apiErr.StatusCode)
			if status == "" {
				status = string(apiErr.Type()) // 529 overloaded_error
			}
			msg = strings.TrimSpace(fmt.Sprintf("anthropic: %d %s", apiErr.StatusCode, status))
		} else {
			// An error event in a stream that began well.
			msg = "anthropic: error in the response stream"
			if t := apiErr.Type(); t != "" {
				msg = fmt.Sprintf("anthropic: %s in the response stream", t)
			}
		}
		detail := apiErr.Message
		if detail == "" {
			detail = apiErr.RawJSON()
		}
		if detail = oneLine(detail); detail != "" {
			msg += ": " + detail
		}
		return &statusError{msg: msg, err: err}
	}
	return &statusError{msg: "anthropic: " + oneLine(err.Error()), err: err}
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
