package openai_test

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
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/openai"
	"github.com/loomhq/loom/openai/openaitest"
	oai "github.com/openai/openai-go/v3"
)

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

type recorder struct{ events []loom.StreamEvent }

func (r *recorder) on(e loom.StreamEvent) { r.events = append(r.events, e) }

func (r *recorder) text(kind string) string {
	var b strings.Builder
	for _, e := range r.events {
		if e.Kind == kind {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func TestName(t *testing.T) {
	if got := openai.New(openai.Config{}).Name(); got != "openai" {
		t.Fatalf("Name() = %q", got)
	}
}

func TestStreamText(t *testing.T) {
	p, srv := newProvider(t, openai.Config{})
	const text = "Hello there, this reply arrives in pieces."
	srv.Enqueue(openaitest.Reply{Text: text, Model: "gpt-4o-mini-2024-07-18"})

	var rec recorder
	resp, err := p.Stream(context.Background(), userRequest("hi"), rec.on)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.events) < 5 {
		t.Fatalf("got %d events, want the text in several pieces: %+v", len(rec.events), rec.events)
	}
	for _, e := range rec.events {
		if e.Kind != loom.EventText {
			t.Fatalf("unexpected event kind %q", e.Kind)
		}
	}
	if got := rec.text(loom.EventText); got != text {
		t.Fatalf("streamed %q, want %q", got, text)
	}
	want := []loom.Part{{Type: loom.PartText, Text: text}}
	if !reflect.DeepEqual(resp.Parts, want) {
		t.Fatalf("parts = %+v, want %+v", resp.Parts, want)
	}
	if resp.Model != "gpt-4o-mini-2024-07-18" || resp.StopReason != "stop" {
		t.Fatalf("model %q stop %q", resp.Model, resp.StopReason)
	}
	if resp.Usage.APICalls != 1 || resp.Usage.OutputTokens == 0 {
		t.Fatalf("usage = %+v", resp.Usage)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
		t.Fatalf("request %s with auth %q", r.Path, r.Header.Get("Authorization"))
	}
	if r.Body["stream"] != true || !reflect.DeepEqual(r.Body["stream_options"], map[string]any{"include_usage": true}) {
		t.Fatalf("stream options: %s", r.Raw)
	}
}

func TestReasoning(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			p, srv := newProvider(t, openai.Config{})
			srv.Enqueue(openaitest.Reply{
				Reasoning:      "The user wants a number. Forty-two fits.",
				ReasoningField: field,
				Text:           "The answer is 42.",
			})
			var rec recorder
			resp, err := p.Stream(context.Background(), userRequest("a number?"), rec.on)
			if err != nil {
				t.Fatal(err)
			}
			if got := rec.text(loom.EventReasoning); got != "The user wants a number. Forty-two fits." {
				t.Fatalf("reasoning events %q", got)
			}
			if rec.events[0].Kind != loom.EventReasoning || rec.events[len(rec.events)-1].Kind != loom.EventText {
				t.Fatalf("events out of order: %+v", rec.events)
			}
			want := []loom.Part{
				{Type: loom.PartReasoning, Text: "The user wants a number. Forty-two fits."},
				{Type: loom.PartText, Text: "The answer is 42."},
			}
			if !reflect.DeepEqual(resp.Parts, want) {
				t.Fatalf("parts = %+v", resp.Parts)
			}
		})
	}
}

func TestToolCalls(t *testing.T) {
	p, srv := newProvider(t, openai.Config{})
	srv.Enqueue(openaitest.Reply{
		Text: "Let me check.",
		ToolCalls: []openaitest.ToolCall{
			{ID: "call_a", Name: "read_file", Args: `{"path":"go.mod","start":1}`},
			{Name: "session_search", Args: `{"query":"sqlite wal","limit":3}`},
			{ID: "call_c", Name: "memory", Args: ""},
		},
	})
	req := userRequest("look around")
	req.Tools = []loom.ToolSpec{
		{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "memory"},
	}
	req.MaxTokens = 1000

	var rec recorder
	resp, err := p.Stream(context.Background(), req, rec.on)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != "tool_calls" {
		t.Fatalf("stop reason %q", resp.StopReason)
	}
	if len(resp.Parts) != 4 {
		t.Fatalf("parts = %+v", resp.Parts)
	}
	if resp.Parts[0].Type != loom.PartText || resp.Parts[0].Text != "Let me check." {
		t.Fatalf("first part %+v", resp.Parts[0])
	}
	wantTools := []struct{ id, name, input string }{
		{"call_a", "read_file", `{"path":"go.mod","start":1}`},
		{"", "session_search", `{"query":"sqlite wal","limit":3}`},
		{"call_c", "memory", `{}`},
	}
	for i, w := range wantTools {
		got := resp.Parts[i+1]
		if got.Type != loom.PartTool || got.Status != loom.ToolPending || got.Name != w.name || string(got.Input) != w.input {
			t.Errorf("tool part %d = %+v (input %s), want %s %s", i, got, got.Input, w.name, w.input)
		}
		if w.id != "" && got.CallID != w.id || got.CallID == "" {
			t.Errorf("tool part %d call id %q, want %q", i, got.CallID, w.id)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("tool part %d: %v", i, err)
		}
	}

	body := srv.Requests()[0].Body
	wantTools2 := []any{
		map[string]any{"type": "function", "function": map[string]any{
			"name": "read_file", "description": "Read a file.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}},
		}},
		map[string]any{"type": "function", "function": map[string]any{
			"name": "memory", "parameters": map[string]any{"type": "object", "properties": map[string]any{}},
		}},
	}
	if !reflect.DeepEqual(body["tools"], wantTools2) {
		t.Fatalf("tools sent:\n%s", srv.Requests()[0].Raw)
	}
	if body["max_completion_tokens"] != float64(1000) {
		t.Fatalf("max_completion_tokens = %v", body["max_completion_tokens"])
	}

	// Complete the calls and continue: the server checks that each call
	// is answered by a tool message right after it.
	asst := &loom.Message{Role: loom.RoleAssistant, Parts: resp.Parts}
	for i := 1; i < 4; i++ {
		asst.Parts[i].Status = loom.ToolCompleted
		asst.Parts[i].Output = json.RawMessage(`"done"`)
	}
	req.Messages = append(req.Messages, asst)
	srv.Enqueue(openaitest.Reply{Text: "All done."})
	resp2, err := p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp2.Parts[0].Text != "All done." {
		t.Fatalf("parts %+v", resp2.Parts)
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

	want := `[
		{"role": "system", "content": "You are loom."},
		{"role": "user", "content": "Summary of the earlier conversation:\nThe user likes Go."},
		{"role": "system", "content": "Profile switched to terse."},
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
	]`
	var wantMsgs any
	if err := json.Unmarshal([]byte(want), &wantMsgs); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0].Body
	if !reflect.DeepEqual(body["messages"], wantMsgs) {
		got, _ := json.MarshalIndent(body["messages"], "", "  ")
		t.Fatalf("messages sent:\n%s", got)
	}
	keys := []string{}
	for k := range body {
		keys = append(keys, k)
	}
	for _, k := range keys {
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

func TestRetry(t *testing.T) {
	for _, status := range []int{500, 429, 503} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			p, srv := newProvider(t, openai.Config{})
			srv.Enqueue(openaitest.Reply{Status: status}, openaitest.Reply{Text: "second time lucky"})
			resp, err := p.Stream(context.Background(), userRequest("hi"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Parts[0].Text != "second time lucky" {
				t.Fatalf("parts = %+v", resp.Parts)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("server saw %d requests, want 2", len(reqs))
			}
			if string(reqs[0].Raw) != string(reqs[1].Raw) {
				t.Fatalf("retry sent a different body")
			}
			if resp.Usage.APICalls != 1 {
				t.Fatalf("api calls = %d", resp.Usage.APICalls)
			}
		})
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	p, srv := newProvider(t, openai.Config{})
	srv.Enqueue(openaitest.Reply{Status: 429, RetryAfter: 300 * time.Millisecond}, openaitest.Reply{Text: "ok"})
	start := time.Now()
	if _, err := p.Stream(context.Background(), userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("retried after %v, before the server's Retry-After", d)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests", n)
	}
}

func TestPersistentFailure(t *testing.T) {
	p, srv := newProvider(t, openai.Config{})
	for range 5 {
		srv.Enqueue(openaitest.Reply{Status: 500, Error: "The server had an error.\nTry again."})
	}
	resp, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if err == nil || resp != nil {
		t.Fatalf("got %+v, %v; want an error", resp, err)
	}
	if got, want := err.Error(), "openai: 500 Internal Server Error: The server had an error. Try again."; got != want {
		t.Fatalf("error %q, want %q", got, want)
	}
	var apiErr *oai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 {
		t.Fatalf("errors.As did not find the SDK error in %#v", err)
	}
	if n := len(srv.Requests()); n != 1+openai.DefaultMaxRetries {
		t.Fatalf("server saw %d requests, want %d", n, 1+openai.DefaultMaxRetries)
	}
}

func TestMaxRetries(t *testing.T) {
	tests := []struct {
		maxRetries int
		requests   int
	}{
		{-1, 1},
		{1, 2},
		{4, 5},
	}
	for _, tt := range tests {
		p, srv := newProvider(t, openai.Config{MaxRetries: tt.maxRetries})
		for range 6 {
			srv.Enqueue(openaitest.Reply{Status: 502})
		}
		_, err := p.Stream(context.Background(), userRequest("hi"), nil)
		if err == nil || !strings.HasPrefix(err.Error(), "openai: 502 Bad Gateway") {
			t.Fatalf("MaxRetries %d: error %v", tt.maxRetries, err)
		}
		if n := len(srv.Requests()); n != tt.requests {
			t.Errorf("MaxRetries %d: %d requests, want %d", tt.maxRetries, n, tt.requests)
		}
	}
}

func TestClientErrorIsNotRetried(t *testing.T) {
	p, srv := newProvider(t, openai.Config{})
	srv.Enqueue(openaitest.Reply{Status: 401})
	_, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if err == nil || err.Error() != "openai: 401 Unauthorized: Incorrect API key provided." {
		t.Fatalf("error %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}
}

func TestErrorBodyOfOtherServers(t *testing.T) {
	// Ollama and some proxies answer with {"error": "text"} or plain text.
	tests := []struct {
		body, want string
	}{
		{`{"error":"model \"llama9\" not found, try pulling it first"}`, `openai: 404 Not Found: model "llama9" not found, try pulling it first`},
		{`{"object":"error","message":"The model does not exist.","type":"NotFoundError","code":404}`, `openai: 404 Not Found: The model does not exist.`},
		{`{"detail":"Not Found"}`, `openai: 404 Not Found: Not Found`},
		{`<html>gateway down</html>`, `openai: 404 Not Found: <html>gateway down</html>`},
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

func TestCancelDuringHangingStream(t *testing.T) {
	p, srv := newProvider(t, openai.Config{})
	srv.Enqueue(openaitest.Reply{Text: "partial answer", Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var got strings.Builder
	var canceledAt time.Time
	resp, err := p.Stream(ctx, userRequest("hi"), func(e loom.StreamEvent) {
		got.WriteString(e.Text)
		if got.String() == "partial answer" {
			canceledAt = time.Now()
			cancel()
		}
	})
	if canceledAt.IsZero() {
		t.Fatalf("streamed %q before hanging, want the partial text", got.String())
	}
	if d := time.Since(canceledAt); d > 2*time.Second {
		t.Fatalf("returned %v after cancellation", d)
	}
	if resp != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %+v, %v; want no response and context.Canceled", resp, err)
	}
}

func TestDeadlineDuringHangingStream(t *testing.T) {
	p, srv := newProvider(t, openai.Config{})
	srv.Enqueue(openaitest.Reply{Text: "partial", Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	resp, err := p.Stream(ctx, userRequest("hi"), nil)
	if resp != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %+v, %v", resp, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestBrokenStreams(t *testing.T) {
	tests := []struct {
		reply openaitest.Reply
		want  string
	}{
		{openaitest.Reply{Text: "cut short", Truncate: true}, "openai: the response stream ended before the reply was complete"},
		{openaitest.Reply{Text: "so far", StreamError: "The model is overloaded."}, "openai: error in the response stream: The model is overloaded."},
	}
	for _, tt := range tests {
		p, srv := newProvider(t, openai.Config{})
		srv.Enqueue(tt.reply)
		var rec recorder
		resp, err := p.Stream(context.Background(), userRequest("hi"), rec.on)
		if resp != nil || err == nil || err.Error() != tt.want {
			t.Errorf("got %+v, %v; want error %q", resp, err, tt.want)
		}
		if rec.text(loom.EventText) != tt.reply.Text {
			t.Errorf("streamed %q before the failure", rec.text(loom.EventText))
		}
	}
}

func TestDelayedChunks(t *testing.T) {
	p, srv := newProvider(t, openai.Config{})
	srv.Enqueue(openaitest.Reply{Text: "one two three", Delay: 30 * time.Millisecond})
	var times []time.Time
	resp, err := p.Stream(context.Background(), userRequest("hi"), func(loom.StreamEvent) {
		times = append(times, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Parts[0].Text != "one two three" || len(times) != 3 {
		t.Fatalf("parts %+v, %d events", resp.Parts, len(times))
	}
	// Events arrive as chunks do, not all at the end.
	if times[2].Sub(times[0]) < 40*time.Millisecond {
		t.Fatalf("events were not streamed: %v apart", times[2].Sub(times[0]))
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestIgnoresEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")

	// No key configured: none is sent.
	_, srv := newProvider(t, openai.Config{})
	p := openai.New(openai.Config{BaseURL: srv.BaseURL()})
	if _, err := p.Stream(context.Background(), userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if auth := srv.Requests()[0].Header.Get("Authorization"); auth != "" {
		t.Fatalf("Authorization %q", auth)
	}

	// No base URL configured: OpenAI's, whatever the environment says.
	var got string
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = r.URL.String()
		return nil, errors.New("no network in tests")
	})}
	p = openai.New(openai.Config{HTTPClient: client, MaxRetries: -1})
	_, err := p.Stream(context.Background(), userRequest("hi"), nil)
	if got != "https://api.openai.com/v1/chat/completions" {
		t.Fatalf("request went to %q", got)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "openai: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %q", err)
	}
}
