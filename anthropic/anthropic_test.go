package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/anthropic"
	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/providertest"
)

// fake is anthropictest's server as the contract tests drive it.
type fake struct{ *anthropictest.Server }

func (f fake) Script(replies ...providertest.Script) {
	for _, r := range replies {
		f.Enqueue(anthropictest.Reply{
			Text: r.Text, Reasoning: r.Reasoning, ToolCalls: r.ToolCalls, Model: r.Model,
			Status: r.Status, Error: r.Error, RetryAfter: r.RetryAfter,
			Delay: r.Delay, Hang: r.Hang, Truncate: r.Truncate, StreamError: r.StreamError,
		})
	}
}

func TestContract(t *testing.T) {
	providertest.Run(t, providertest.Suite{
		Name:  "anthropic",
		Model: model,
		New: func(c providertest.Config) loom.Provider {
			return anthropic.New(anthropic.Config{APIKey: c.APIKey, BaseURL: c.BaseURL, HTTPClient: c.HTTPClient, MaxRetries: c.MaxRetries})
		},
		Fake:              func() providertest.Fake { return fake{anthropictest.NewServer()} },
		DefaultMaxRetries: anthropic.DefaultMaxRetries,
		RetryStatuses:     []int{500, 429, 529},
		StatusCode: func(err error) (int, bool) {
			var apiErr *anthropic.Error
			if !errors.As(err, &apiErr) {
				return 0, false
			}
			return apiErr.StatusCode, true
		},
		StopReason:  "end_turn",
		StreamError: func(msg string) string { return "anthropic: overloaded_error in the response stream: " + msg },
		DefaultURL:  "https://api.anthropic.com/v1/messages",
		BaseURLEnv:  "ANTHROPIC_BASE_URL",
	})
}

func newProvider(t *testing.T, cfg anthropic.Config) (*anthropic.Provider, *anthropictest.Server) {
	t.Helper()
	srv := anthropictest.NewServer()
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.BaseURL()
	if cfg.APIKey == "" {
		cfg.APIKey = "sk-ant-test"
	}
	return anthropic.New(cfg), srv
}

const model = "claude-sonnet-4-20250514"

func userRequest(text string) *loom.ModelRequest {
	return &loom.ModelRequest{
		Model:    model,
		Messages: []*loom.Message{textMessage(loom.RoleUser, text)},
	}
}

func textMessage(role, text string) *loom.Message {
	return &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
}

func TestStreamRequest(t *testing.T) {
	p, srv := newProvider(t, anthropic.Config{})
	if _, err := p.Stream(context.Background(), userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Path != "/v1/messages" || r.Header.Get("Anthropic-Version") == "" {
		t.Fatalf("request %s %v", r.Path, r.Header)
	}
	if r.Body["stream"] != true || r.Body["max_tokens"] != float64(anthropic.DefaultMaxTokens) || r.Body["thinking"] != nil {
		t.Fatalf("body %s", r.Raw)
	}
	providertest.JSONEqual(t, "messages", r.Body["messages"], `[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]`)
}

func TestThinking(t *testing.T) {
	p, srv := newProvider(t, anthropic.Config{})
	const thought = "The user wants a number. Forty-two fits."
	srv.Enqueue(anthropictest.Reply{Reasoning: thought, Text: "The answer is 42."})
	req := userRequest("a number?")
	req.Thinking = true
	req.MaxTokens = 4000
	resp, err := p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []loom.Part{
		{Type: loom.PartReasoning, Text: thought, Metadata: json.RawMessage(`{"signature":"` + anthropictest.Signature(thought) + `"}`)},
		{Type: loom.PartText, Text: "The answer is 42."},
	}
	if !reflect.DeepEqual(resp.Parts, want) {
		t.Fatalf("parts = %+v", resp.Parts)
	}
	body := srv.Requests()[0].Body
	providertest.JSONEqual(t, "thinking", body["thinking"], `{"type":"enabled","budget_tokens":2000}`)
	if body["max_tokens"] != float64(4000) {
		t.Fatalf("max_tokens %v", body["max_tokens"])
	}

	// The next turn sends the thinking back with its signature; the
	// server refuses a block whose signature does not match.
	req.Messages = append(req.Messages,
		&loom.Message{Role: loom.RoleAssistant, Parts: resp.Parts},
		textMessage(loom.RoleUser, "why?"))
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[1].Body["messages"].([]any)
	providertest.JSONEqual(t, "assistant turn", msgs[1], fmt.Sprintf(`{"role":"assistant","content":[
		{"type":"thinking","thinking":%q,"signature":%q},
		{"type":"text","text":"The answer is 42."}]}`, thought, anthropictest.Signature(thought)))

	// A tampered thought is refused by the server, so the test above
	// would notice a provider that mangles thinking blocks.
	resp.Parts[0].Text += " (edited)"
	_, err = p.Stream(context.Background(), req, nil)
	if err == nil || !strings.Contains(err.Error(), "Invalid `signature`") {
		t.Fatalf("tampered thinking: %v", err)
	}
}

func TestThinkingModes(t *testing.T) {
	tests := []struct {
		model string
		want  string // the thinking parameter, "" for none
	}{
		{"claude-3-5-haiku-20241022", ""},
		{"claude-3-7-sonnet-20250219", `{"type":"enabled","budget_tokens":8192}`},
		{"claude-sonnet-4-20250514", `{"type":"enabled","budget_tokens":8192}`},
		{"claude-opus-4-1", `{"type":"enabled","budget_tokens":8192}`},
		{"claude-sonnet-4-5-20250929", `{"type":"enabled","budget_tokens":8192}`},
		{"claude-haiku-4-5", `{"type":"enabled","budget_tokens":8192}`},
		{"claude-opus-4-6", `{"type":"adaptive"}`},
		{"claude-sonnet-5", `{"type":"adaptive"}`},
		{"some-compatible-model", `{"type":"enabled","budget_tokens":8192}`},
	}
	p, srv := newProvider(t, anthropic.Config{})
	for i, tt := range tests {
		req := userRequest("hi")
		req.Model = tt.model
		req.Thinking = true
		if _, err := p.Stream(context.Background(), req, nil); err != nil {
			t.Fatalf("%s: %v", tt.model, err)
		}
		body := srv.Requests()[i].Body
		if tt.want == "" {
			if body["thinking"] != nil || body["max_tokens"] != float64(anthropic.DefaultMaxTokens) {
				t.Errorf("%s: thinking %v, max_tokens %v", tt.model, body["thinking"], body["max_tokens"])
			}
			continue
		}
		providertest.JSONEqual(t, tt.model+" thinking", body["thinking"], tt.want)
		if body["max_tokens"] != float64(2*anthropic.DefaultMaxTokens) {
			t.Errorf("%s: max_tokens %v", tt.model, body["max_tokens"])
		}
	}
}

// TestToolCallsWithThinking covers a tool-use turn made with thinking:
// its continuation keeps thinking on, the turn opening with its thinking
// block as the API requires.
func TestToolCallsWithThinking(t *testing.T) {
	p, srv := newProvider(t, anthropic.Config{})
	srv.Enqueue(anthropictest.Reply{
		Reasoning: "I need the file and the history.",
		Text:      "Let me check.",
		ToolCalls: []anthropictest.ToolCall{
			{ID: "toolu_a", Name: "read_file", Args: `{"path":"go.mod","start":1}`},
			{Name: "session_search", Args: `{"query":"sqlite wal","limit":3}`},
			{ID: "toolu_c", Name: "memory"},
		},
	})
	req := userRequest("look around")
	req.Thinking = true
	req.System = "You are loom."
	req.Tools = []loom.ToolSpec{
		{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"start":{"type":"integer"}},"required":["path"],"additionalProperties":false}`)},
		{Name: "memory"},
	}
	resp, err := p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != "tool_use" || len(resp.Parts) != 5 || resp.Parts[0].Type != loom.PartReasoning {
		t.Fatalf("stop %q parts %+v", resp.StopReason, resp.Parts)
	}

	first := srv.Requests()[0].Body
	providertest.JSONEqual(t, "tools", first["tools"], `[
		{"name":"read_file","description":"Read a file.","input_schema":{"type":"object","properties":{"path":{"type":"string"},"start":{"type":"integer"}},"required":["path"],"additionalProperties":false}},
		{"name":"memory","input_schema":{"type":"object","properties":{}}}]`)
	providertest.JSONEqual(t, "system", first["system"], `[{"type":"text","text":"You are loom.","cache_control":{"type":"ephemeral"}}]`)

	// Complete the calls and continue: the server checks that every
	// tool_use is answered and that the turn still opens with its thinking.
	asst := &loom.Message{Role: loom.RoleAssistant, Parts: resp.Parts}
	for i := 2; i < 5; i++ {
		asst.Parts[i].Status = loom.ToolCompleted
		asst.Parts[i].Output = json.RawMessage(`"done"`)
	}
	req.Messages = append(req.Messages, asst)
	srv.Enqueue(anthropictest.Reply{Text: "All done."})
	resp2, err := p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp2.Parts[len(resp2.Parts)-1].Text != "All done." {
		t.Fatalf("parts %+v", resp2.Parts)
	}
	if srv.Requests()[1].Body["thinking"] == nil {
		t.Fatal("thinking was dropped")
	}
}

func TestThinkingDroppedForTurnMadeWithout(t *testing.T) {
	// The tool-use turn being continued has no thinking block (it was
	// made with thinking off); the API would refuse thinking now.
	p, srv := newProvider(t, anthropic.Config{})
	req := userRequest("read it")
	req.Thinking = true
	req.Messages = append(req.Messages, &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{
		{Type: loom.PartTool, CallID: "toolu_1", Name: "read_file", Status: loom.ToolCompleted,
			Input: json.RawMessage(`{"path":"x"}`), Output: json.RawMessage(`"x"`)},
	}})
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if th := srv.Requests()[0].Body["thinking"]; th != nil {
		t.Fatalf("thinking sent: %v", th)
	}
}

func TestHistoryWireShape(t *testing.T) {
	p, srv := newProvider(t, anthropic.Config{})
	sig := func(s string) json.RawMessage {
		return json.RawMessage(`{"signature":"` + anthropictest.Signature(s) + `"}`)
	}
	req := &loom.ModelRequest{
		Model:     model,
		System:    "You are loom.",
		Thinking:  true,
		MaxTokens: 4000,
		Messages: []*loom.Message{
			textMessage(loom.RoleSummary, "The user likes Go."),
			textMessage(loom.RoleSystem, "Profile switched to terse."),
			textMessage(loom.RoleUser, "Read go.mod, then search."),
			{Role: loom.RoleAssistant, Parts: []loom.Part{
				{Type: loom.PartStepStart},
				{Type: loom.PartReasoning, Text: "I should read the file first.", Metadata: sig("I should read the file first.")},
				{Type: loom.PartText, Text: "Let me look."},
				{Type: loom.PartTool, CallID: "call_1", Name: "read_file", Status: loom.ToolCompleted,
					Input: json.RawMessage(`{"path":"go.mod"}`), Output: json.RawMessage(`"module example.com/x\n"`)},
				{Type: loom.PartTool, CallID: "call_2", Name: "session_search", Status: loom.ToolError,
					Input: json.RawMessage(`{"query":"x"}`), Error: "store is locked"},
				{Type: loom.PartStepFinish},
			}},
			textMessage(loom.RoleAssistant, "It is module example.com/x."),
			textMessage(loom.RoleUser, "Thanks. Count the lines?"),
			{Role: loom.RoleAssistant, Parts: []loom.Part{
				{Type: loom.PartReasoning, Text: "Counting needs the file.", Metadata: sig("Counting needs the file.")},
				{Type: loom.PartTool, CallID: "call_3", Name: "read_file", Status: loom.ToolPending,
					Input: json.RawMessage(`{"path":"a.txt"}`)},
			}},
			{Role: loom.RoleTool, Parts: []loom.Part{
				{Type: loom.PartTool, CallID: "call_3", Name: "read_file", Status: loom.ToolCompleted,
					Output: json.RawMessage(`{"lines":3}`)},
				{Type: loom.PartTool, CallID: "call_gone", Name: "read_file", Status: loom.ToolCompleted,
					Output: json.RawMessage(`"orphan"`)},
			}},
			{Role: loom.RoleAssistant, Parts: []loom.Part{
				{Type: loom.PartReasoning, Text: "unsigned thoughts from another provider"},
				{Type: loom.PartText, Text: "Three lines."},
				{Type: loom.PartTool, CallID: "call_4", Name: "agent", Status: loom.ToolRunning,
					Input: json.RawMessage(`{"task":"t"}`)},
			}},
			textMessage(loom.RoleAssistant, "Anything else?"),
			textMessage(loom.RoleUser, "ok"),
		},
	}
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0].Body
	// A system message of the history is not model input: the system
	// prompt is the request's alone.
	providertest.JSONEqual(t, "system", body["system"], `[
		{"type":"text","text":"You are loom.","cache_control":{"type":"ephemeral"}}]`)
	providertest.JSONEqual(t, "thinking", body["thinking"], `{"type":"enabled","budget_tokens":2000}`)
	providertest.JSONEqual(t, "messages", body["messages"], fmt.Sprintf(`[
		{"role":"user","content":[
			{"type":"text","text":"Summary of the earlier conversation:\nThe user likes Go."},
			{"type":"text","text":"Read go.mod, then search."}]},
		{"role":"assistant","content":[
			{"type":"thinking","thinking":"I should read the file first.","signature":%q},
			{"type":"text","text":"Let me look."},
			{"type":"tool_use","id":"call_1","name":"read_file","input":{"path":"go.mod"}},
			{"type":"tool_use","id":"call_2","name":"session_search","input":{"query":"x"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"call_1","content":[{"type":"text","text":"module example.com/x\n"}]},
			{"type":"tool_result","tool_use_id":"call_2","is_error":true,"content":[{"type":"text","text":"store is locked"}]}]},
		{"role":"assistant","content":[{"type":"text","text":"It is module example.com/x."}]},
		{"role":"user","content":[{"type":"text","text":"Thanks. Count the lines?"}]},
		{"role":"assistant","content":[
			{"type":"thinking","thinking":"Counting needs the file.","signature":%q},
			{"type":"tool_use","id":"call_3","name":"read_file","input":{"path":"a.txt"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"call_3","content":[{"type":"text","text":"{\"lines\":3}"}]}]},
		{"role":"assistant","content":[
			{"type":"text","text":"Three lines."},
			{"type":"tool_use","id":"call_4","name":"agent","input":{"task":"t"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"call_4","is_error":true,"content":[{"type":"text","text":"interrupted"}]}]},
		{"role":"assistant","content":[{"type":"text","text":"Anything else?"}]},
		{"role":"user","content":[{"type":"text","text":"ok","cache_control":{"type":"ephemeral"}}]}
	]`, anthropictest.Signature("I should read the file first."), anthropictest.Signature("Counting needs the file.")))

	// With thinking off, no thinking block goes back.
	req.Thinking = false
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	second := srv.Requests()[1]
	if second.Body["thinking"] != nil || strings.Contains(string(second.Raw), `"type":"thinking"`) {
		t.Fatalf("thinking sent with thinking off: %s", second.Raw)
	}
}

func TestMergesConsecutiveRoles(t *testing.T) {
	p, srv := newProvider(t, anthropic.Config{})
	req := &loom.ModelRequest{Model: model, Messages: []*loom.Message{
		textMessage(loom.RoleUser, "one"),
		textMessage(loom.RoleUser, "two"),
		textMessage(loom.RoleAssistant, "three"),
		{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: ""}}},
		textMessage(loom.RoleAssistant, "four"),
		textMessage(loom.RoleSummary, "five"),
		textMessage(loom.RoleUser, "six"),
	}}
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	providertest.JSONEqual(t, "messages", srv.Requests()[0].Body["messages"], `[
		{"role":"user","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]},
		{"role":"assistant","content":[{"type":"text","text":"three"},{"type":"text","text":"four"}]},
		{"role":"user","content":[
			{"type":"text","text":"Summary of the earlier conversation:\nfive"},
			{"type":"text","text":"six","cache_control":{"type":"ephemeral"}}]}]`)
}

func TestUsage(t *testing.T) {
	p, srv := newProvider(t, anthropic.Config{})
	srv.Enqueue(anthropictest.Reply{Text: "cached", Usage: &anthropictest.Usage{
		InputTokens: 50, OutputTokens: 300, CacheReadInputTokens: 2000, CacheCreationInputTokens: 500, ThinkingTokens: 120,
	}})
	resp, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := loom.Usage{InputTokens: 50, OutputTokens: 300, ReasoningTokens: 120, CacheReadTokens: 2000, CacheWriteTokens: 500, APICalls: 1}
	if resp.Usage != want {
		t.Fatalf("usage = %+v, want %+v", resp.Usage, want)
	}
}

// TestUsageFromMessageStart covers servers whose message_delta carries
// only output_tokens, the input counts being in message_start alone.
func TestUsageFromMessageStart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		events := []string{
			`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-x","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":7,"cache_read_input_tokens":11,"output_tokens":1}}}`,
			`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`event: ping` + "\n" + `data: {"type": "ping"}`,
			`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`,
			`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`,
			`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`,
			`event: message_stop` + "\n" + `data: {"type":"message_stop"}`,
		}
		for _, e := range events {
			fmt.Fprint(w, e+"\n\n")
		}
	}))
	defer srv.Close()
	p := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL})
	resp, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := loom.Usage{InputTokens: 25, OutputTokens: 15, CacheReadTokens: 11, CacheWriteTokens: 7, APICalls: 1}
	if resp.Usage != want || resp.Model != "claude-x" || resp.Parts[0].Text != "Hi" {
		t.Fatalf("response %+v, want usage %+v", resp, want)
	}
}

// TestStockErrors covers failures the service words itself, among them
// its own status 529, which HTTP has no name for.
func TestStockErrors(t *testing.T) {
	for _, tt := range []struct {
		status int
		want   string
	}{
		{500, "anthropic: 500 Internal Server Error: Internal server error"},
		{529, "anthropic: 529 overloaded_error: Overloaded"},
	} {
		p, srv := newProvider(t, anthropic.Config{MaxRetries: -1})
		srv.Enqueue(anthropictest.Reply{Status: tt.status})
		if _, err := p.Stream(context.Background(), userRequest("hi"), nil); err == nil || err.Error() != tt.want {
			t.Errorf("%d: error %v, want %q", tt.status, err, tt.want)
		}
	}
}

func TestClientErrors(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "from-the-environment")
	srv := anthropictest.NewServer()
	defer srv.Close()

	// No key configured: nothing is taken from the environment.
	p := anthropic.New(anthropic.Config{BaseURL: srv.BaseURL()})
	_, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if err == nil || err.Error() != "anthropic: 401 Unauthorized: x-api-key header is required" {
		t.Fatalf("error %v", err)
	}

	// A request the API refuses is not retried.
	p = anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.BaseURL()})
	req := userRequest("hi")
	req.Model = ""
	_, err = p.Stream(context.Background(), req, nil)
	if err == nil || err.Error() != "anthropic: 400 Bad Request: model: Field required" {
		t.Fatalf("error %v", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests", n)
	}
}
