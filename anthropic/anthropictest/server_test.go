package anthropictest_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/loomhq/loom/anthropic/anthropictest"
)

func post(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "k")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestEchoWhenNothingIsScripted(t *testing.T) {
	srv := anthropictest.NewServer()
	defer srv.Close()
	res, body := post(t, srv.URL, `{"model":"m","max_tokens":100,"messages":[
		{"role":"user","content":"first"},{"role":"assistant","content":"a"},
		{"role":"user","content":[{"type":"text","text":"second"}]}]}`)
	if res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	var m struct {
		Type, Role, Model string
		StopReason        string `json:"stop_reason"`
		Content           []struct{ Type, Text string }
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	if m.Type != "message" || m.Role != "assistant" || m.Model != "m" || m.StopReason != "end_turn" ||
		len(m.Content) != 1 || m.Content[0].Text != "echo: second" {
		t.Fatalf("message %s", body)
	}
}

func TestStreamWireFormat(t *testing.T) {
	srv := anthropictest.NewServer()
	defer srv.Close()
	srv.Enqueue(anthropictest.Reply{
		Reasoning: "hmm ok",
		Text:      "Hi you",
		ToolCalls: []anthropictest.ToolCall{{ID: "toolu_1", Name: "f", Args: `{"a":"0123456789"}`}},
		Usage:     &anthropictest.Usage{InputTokens: 10, OutputTokens: 5, CacheReadInputTokens: 4},
	})
	res, err := http.DefaultClient.Do(func() *http.Request {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(
			`{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"x"}]}`))
		req.Header.Set("X-Api-Key", "k")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		return req
	}())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	var names []string
	var text, thinking, args, sig strings.Builder
	var stop string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		name, ok := strings.CutPrefix(line, "event: ")
		if !ok {
			t.Fatalf("line %q, want an event line", line)
		}
		sc.Scan()
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			t.Fatalf("line %q, want a data line", sc.Text())
		}
		var ev struct {
			Type  string
			Delta struct {
				Type, Text, Thinking, Signature string
				PartialJSON                     string `json:"partial_json"`
				StopReason                      string `json:"stop_reason"`
			}
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type != name {
			t.Fatalf("event %q carries type %q", name, ev.Type)
		}
		names = append(names, name)
		text.WriteString(ev.Delta.Text)
		thinking.WriteString(ev.Delta.Thinking)
		sig.WriteString(ev.Delta.Signature)
		args.WriteString(ev.Delta.PartialJSON)
		if ev.Delta.StopReason != "" {
			stop = ev.Delta.StopReason
		}
	}
	if names[0] != "message_start" || names[1] != "ping" || names[len(names)-2] != "message_delta" || names[len(names)-1] != "message_stop" {
		t.Fatalf("events %v", names)
	}
	if text.String() != "Hi you" || thinking.String() != "hmm ok" || sig.String() != anthropictest.Signature("hmm ok") ||
		args.String() != `{"a":"0123456789"}` || stop != "tool_use" {
		t.Fatalf("text %q thinking %q sig %q args %q stop %q", text.String(), thinking.String(), sig.String(), args.String(), stop)
	}
}

func TestValidation(t *testing.T) {
	call := `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]}`
	tests := []struct {
		name, body, want string
	}{
		{"no max_tokens", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, "max_tokens: Field required"},
		{"same role twice", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"},{"role":"user","content":"y"}]}`, "roles must alternate"},
		{"system role", `{"model":"m","max_tokens":10,"messages":[{"role":"system","content":"x"}]}`, "Input should be 'user' or 'assistant'"},
		{"empty text", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, "text content blocks must be non-empty"},
		{"unanswered call", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"},` + call + `,{"role":"user","content":"y"}]}`, "`tool_use` ids were found without `tool_result` blocks immediately after: t1"},
		{"orphan result", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t9"}]}]}`, "unexpected `tool_use_id` found in `tool_result` blocks: t9"},
		{"result after text", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"},` + call + `,{"role":"user","content":[{"type":"text","text":"y"},{"type":"tool_result","tool_use_id":"t1"}]}]}`, "must come before any other content"},
		{"bad signature", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"thinking","thinking":"a","signature":"forged"},{"type":"text","text":"b"}]},{"role":"user","content":"y"}]}`, "Invalid `signature`"},
		{"small budget", `{"model":"m","max_tokens":5000,"thinking":{"type":"enabled","budget_tokens":100},"messages":[{"role":"user","content":"x"}]}`, "greater than or equal to 1024"},
		{"budget over max", `{"model":"m","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":2000},"messages":[{"role":"user","content":"x"}]}`, "`max_tokens` must be greater than `thinking.budget_tokens`"},
		{"thinking missing in tool turn", `{"model":"m","max_tokens":3000,"thinking":{"type":"enabled","budget_tokens":2000},"messages":[{"role":"user","content":"x"},` + call + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}]}`, "must start with a thinking block"},
		{"five breakpoints", `{"model":"m","max_tokens":10,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}},{"type":"text","text":"s","cache_control":{"type":"ephemeral"}},{"type":"text","text":"s","cache_control":{"type":"ephemeral"}},{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}]}`, "A maximum of 4 blocks with cache_control"},
	}
	srv := anthropictest.NewServer()
	defer srv.Close()
	for _, tt := range tests {
		res, body := post(t, srv.URL, tt.body)
		if res.StatusCode != 400 || !strings.Contains(body, tt.want) || !strings.Contains(body, `"type":"invalid_request_error"`) {
			t.Errorf("%s: %d %s", tt.name, res.StatusCode, body)
		}
	}
	// A valid tool exchange with signed thinking is accepted, and the
	// rejected requests did not use up the script.
	srv.Enqueue(anthropictest.Reply{Text: "scripted"})
	res, body := post(t, srv.URL, fmt.Sprintf(`{"model":"m","max_tokens":3000,"thinking":{"type":"enabled","budget_tokens":2000},"messages":[
		{"role":"user","content":"x"},
		{"role":"assistant","content":[{"type":"thinking","thinking":"a","signature":%q},{"type":"tool_use","id":"t1","name":"f","input":{}},{"type":"tool_use","id":"t2","name":"g","input":{"k":1}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":[{"type":"text","text":"no"}]},{"type":"tool_result","tool_use_id":"t1"},{"type":"text","text":"and then?"}]}]}`,
		anthropictest.Signature("a")))
	if res.StatusCode != 200 || !strings.Contains(body, `"text":"scripted"`) || !strings.Contains(body, `"type":"thinking"`) {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
}

func TestHeadersAndErrors(t *testing.T) {
	srv := anthropictest.NewServer()
	defer srv.Close()
	res, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("no key: %d", res.StatusCode)
	}

	srv.Enqueue(anthropictest.Reply{Status: 529, RetryAfter: 2500e6})
	res, body := post(t, srv.URL, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"}]}`)
	if res.StatusCode != 529 || res.Header.Get("Retry-After") != "3" || res.Header.Get("Retry-After-Ms") != "2500" ||
		res.Header.Get("Request-Id") == "" || !strings.Contains(body, `"type":"overloaded_error"`) {
		t.Fatalf("%d %v %s", res.StatusCode, res.Header, body)
	}
	if len(srv.Requests()) != 2 || srv.Requests()[1].Body["model"] != "m" {
		t.Fatalf("requests %+v", srv.Requests())
	}
}
