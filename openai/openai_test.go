package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/openai"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// fake is openaitest's server as the contract tests drive it.
type fake struct{ *openaitest.Server }

func (f fake) Script(replies ...providertest.Script) {
	for _, r := range replies {
		f.Enqueue(openaitest.Reply{
			Text: r.Text, Reasoning: r.Reasoning, ToolCalls: r.ToolCalls, Model: r.Model,
			Status: r.Status, Error: r.Error, RetryAfter: r.RetryAfter,
			Delay: r.Delay, Hang: r.Hang, Truncate: r.Truncate, StreamError: r.StreamError,
		})
	}
}

func TestContract(t *testing.T) {
	providertest.Run(t, providertest.Suite{
		Name:  "openai",
		Model: "gpt-4o-mini",
		New: func(c providertest.Config) loom.Provider {
			return openai.New(openai.Config{APIKey: c.APIKey, BaseURL: c.BaseURL, HTTPClient: c.HTTPClient, MaxRetries: c.MaxRetries})
		},
		Fake:              func() providertest.Fake { return fake{openaitest.NewServer()} },
		DefaultMaxRetries: openai.DefaultMaxRetries,
		RetryStatuses:     []int{500, 429, 503},
		StatusCode: func(err error) (int, bool) {
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) {
				return 0, false
			}
			return apiErr.StatusCode, true
		},
		StopReason:  "stop",
		StreamError: func(msg string) string { return "openai: error in the response stream: " + msg },
		DefaultURL:  "https://api.openai.com/v1/chat/completions",
		BaseURLEnv:  "OPENAI_BASE_URL",
	})
}

func newProvider(t *testing.T, cfg openai.Config) (*openai.Provider, *openaitest.Server) {
	t.Helper()
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.BaseURL()
	if cfg.APIKey == "" {
		cfg.APIKey = "sk-test"
	}
	return openai.New(cfg), srv
}

func userRequest(text string) *loom.ModelRequest {
	return &loom.ModelRequest{
		Model: "gpt-4o-mini",
		Messages: []*loom.Message{{
			Role:  loom.RoleUser,
			Parts: []loom.Part{{Type: loom.PartText, Text: text}},
		}},
	}
}

func TestStreamRequest(t *testing.T) {
	p, srv := newProvider(t, openai.Config{})
	if _, err := p.Stream(context.Background(), userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
		t.Fatalf("request %s with auth %q", r.Path, r.Header.Get("Authorization"))
	}
	if r.Body["stream"] != true || !reflect.DeepEqual(r.Body["stream_options"], map[string]any{"include_usage": true}) {
		t.Fatalf("stream options: %s", r.Raw)
	}
}

// TestReasoningFields covers both names servers give the reasoning field.
func TestReasoningFields(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			p, srv := newProvider(t, openai.Config{})
			srv.Enqueue(openaitest.Reply{Reasoning: "Forty-two fits.", ReasoningField: field, Text: "42."})
			var rec providertest.Recorder
			resp, err := p.Stream(context.Background(), userRequest("a number?"), rec.On)
			if err != nil {
				t.Fatal(err)
			}
			want := []loom.Part{
				{Type: loom.PartReasoning, Text: "Forty-two fits."},
				{Type: loom.PartText, Text: "42."},
			}
			if !reflect.DeepEqual(resp.Parts, want) || rec.Text(loom.EventReasoning) != "Forty-two fits." {
				t.Fatalf("parts = %+v, events %+v", resp.Parts, rec.Events)
			}
		})
	}
}

func TestToolsWireShape(t *testing.T) {
	p, srv := newProvider(t, openai.Config{})
	req := userRequest("look around")
	req.Tools = []loom.ToolSpec{
		{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "memory"},
	}
	req.MaxTokens = 1000
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0].Body
	providertest.JSONEqual(t, "tools", body["tools"], `[
		{"type":"function","function":{"name":"read_file","description":"Read a file.",
			"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
		{"type":"function","function":{"name":"memory","parameters":{"type":"object","properties":{}}}}]`)
	if body["max_completion_tokens"] != float64(1000) {
		t.Fatalf("max_completion_tokens = %v", body["max_completion_tokens"])
	}
}

// TestToolCallsOfLooseServers covers servers that repeat the function
// name in every delta and give calls no id.
func TestToolCallsOfLooseServers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{
			`{"role":"assistant","tool_calls":[{"index":0,"type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}`,
			`{"tool_calls":[{"index":0,"function":{"name":"read_file","arguments":"th\":\"x\"}"}}]}`,
			`{"tool_calls":[{"index":1,"function":{"name":"memory","arguments":""}}]}`,
		} {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"llama\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", d)
		}
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"llama","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	resp, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1"}).Stream(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Parts) != 2 {
		t.Fatalf("parts %+v", resp.Parts)
	}
	a, b := resp.Parts[0], resp.Parts[1]
	if a.Name != "read_file" || string(a.Input) != `{"path":"x"}` || b.Name != "memory" || string(b.Input) != "{}" {
		t.Fatalf("parts %+v / %+v", a, b)
	}
	if a.CallID == "" || b.CallID == "" || a.CallID == b.CallID {
		t.Fatalf("call ids %q %q", a.CallID, b.CallID)
	}
}

func TestHistoryWireShape(t *testing.T) {
	p, srv := newProvider(t, openai.Config{})
	text := func(role, s string) *loom.Message {
		return &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: s}}}
	}
	req := &loom.ModelRequest{
		Model:  "gpt-4.1",
		System: "You are loom.",
		Messages: []*loom.Message{
			{Role: loom.RoleSummary, Parts: []loom.Part{{Type: loom.PartText, Text: "The user likes Go."}}},
			text(loom.RoleSystem, "Profile switched to terse."),
			text(loom.RoleUser, "Read go.mod, then search."),
			{Role: loom.RoleAssistant, Parts: []loom.Part{
				{Type: loom.PartStepStart},
				{Type: loom.PartReasoning, Text: "I should read the file first."},
				{Type: loom.PartText, Text: "Let me look."},
				{Type: loom.PartTool, CallID: "call_1", Name: "read_file", Status: loom.ToolCompleted,
					Input: json.RawMessage(`{"path":"go.mod"}`), Output: json.RawMessage(`"module example.com/x\n"`)},
				{Type: loom.PartTool, CallID: "call_2", Name: "session_search", Status: loom.ToolError,
					Input: json.RawMessage(`{"query":"x"}`), Error: "store is locked"},
			}},
			text(loom.RoleAssistant, "It is module example.com/x."),
			text(loom.RoleUser, "Thanks. Count the lines?"),
			{Role: loom.RoleAssistant, Parts: []loom.Part{
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
				{Type: loom.PartTool, CallID: "call_4", Name: "agent", Status: loom.ToolRunning,
					Input: json.RawMessage(`{"task":"t"}`)},
			}},
			{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartReasoning, Text: "only thoughts"}}},
			text(loom.RoleUser, "ok"),
		},
	}
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}

	// The history's system message is not model input: the one system
	// message sent is the request's prompt, first.
	providertest.JSONEqual(t, "messages", srv.Requests()[0].Body["messages"], `[
		{"role": "system", "content": "You are loom."},
		{"role": "user", "content": "Summary of the earlier conversation:\nThe user likes Go."},
		{"role": "user", "content": "Read go.mod, then search."},
		{"role": "assistant", "content": "Let me look.", "tool_calls": [
			{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"go.mod\"}"}},
			{"id": "call_2", "type": "function", "function": {"name": "session_search", "arguments": "{\"query\":\"x\"}"}}
		]},
		{"role": "tool", "tool_call_id": "call_1", "content": "module example.com/x\n"},
		{"role": "tool", "tool_call_id": "call_2", "content": "error: store is locked"},
		{"role": "assistant", "content": "It is module example.com/x."},
		{"role": "user", "content": "Thanks. Count the lines?"},
		{"role": "assistant", "tool_calls": [
			{"id": "call_3", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}}
		]},
		{"role": "tool", "tool_call_id": "call_3", "content": "{\"lines\":3}"},
		{"role": "assistant", "tool_calls": [
			{"id": "call_4", "type": "function", "function": {"name": "agent", "arguments": "{\"task\":\"t\"}"}}
		]},
		{"role": "tool", "tool_call_id": "call_4", "content": "error: interrupted"},
		{"role": "user", "content": "ok"}
	]`)
	body := srv.Requests()[0].Body
	for k := range body {
		switch k {
		case "model", "messages", "stream", "stream_options":
		default:
			t.Errorf("unexpected request field %q", k)
		}
	}
	if body["model"] != "gpt-4.1" {
		t.Errorf("model = %v", body["model"])
	}
}

func TestUsage(t *testing.T) {
	p, srv := newProvider(t, openai.Config{})
	srv.Enqueue(openaitest.Reply{
		Text: "cached",
		Usage: &openaitest.Usage{
			PromptTokens: 1500, CompletionTokens: 300,
			CachedTokens: 1024, CacheWriteTokens: 100, ReasoningTokens: 120,
		},
	})
	resp, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := loom.Usage{
		InputTokens: 376, OutputTokens: 300, ReasoningTokens: 120,
		CacheReadTokens: 1024, CacheWriteTokens: 100, APICalls: 1,
	}
	if resp.Usage != want {
		t.Fatalf("usage = %+v, want %+v", resp.Usage, want)
	}
}

func TestErrorBodyOfOtherServers(t *testing.T) {
	// Ollama and some proxies answer with {"error": "text"} or plain
	// text. A 404 says how to choose a model the server has.
	const hint = " (LOOM_MODEL chooses a model the server has; OPENAI_BASE_URL usually ends in /v1)"
	tests := []struct {
		body, want string
	}{
		{`{"error":"model \"llama9\" not found, try pulling it first"}`, `openai: 404 Not Found: model "llama9" not found, try pulling it first` + hint},
		{`{"object":"error","message":"The model does not exist.","type":"NotFoundError","code":404}`, `openai: 404 Not Found: The model does not exist.` + hint},
		{`{"detail":"Not Found"}`, `openai: 404 Not Found: Not Found` + hint},
		{`<html>gateway down</html>`, `openai: 404 Not Found: <html>gateway down</html>` + hint},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(tt.body))
		}))
		p := openai.New(openai.Config{BaseURL: srv.URL + "/v1"})
		_, err := p.Stream(context.Background(), userRequest("hi"), nil)
		srv.Close()
		if err == nil || err.Error() != tt.want {
			t.Errorf("body %s: error %v, want %s", tt.body, err, tt.want)
		}
	}
}

// TestNoKeyNoAuthorization checks that no key is sent when none is
// configured, whatever the environment says.
func TestNoKeyNoAuthorization(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	_, srv := newProvider(t, openai.Config{})
	p := openai.New(openai.Config{BaseURL: srv.BaseURL()})
	if _, err := p.Stream(context.Background(), userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if auth := srv.Requests()[0].Header.Get("Authorization"); auth != "" {
		t.Fatalf("Authorization %q", auth)
	}
}
