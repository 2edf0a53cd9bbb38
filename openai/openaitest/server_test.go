package openaitest_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/loomhq/loom/openai/openaitest"
)

func post(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestEchoWhenNothingIsScripted(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	res, body := post(t, srv.BaseURL()+"/chat/completions",
		`{"model":"m","messages":[{"role":"user","content":"first"},{"role":"assistant","content":"a"},{"role":"user","content":[{"type":"text","text":"second"}]}]}`)
	if res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	var c struct {
		Object  string
		Model   string
		Choices []struct {
			Message      struct{ Role, Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		t.Fatal(err)
	}
	if c.Object != "chat.completion" || c.Model != "m" || c.Choices[0].Message.Content != "echo: second" ||
		c.Choices[0].FinishReason != "stop" || c.Usage.PromptTokens == 0 {
		t.Fatalf("completion %s", body)
	}
}

func TestStreamWireFormat(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.Enqueue(openaitest.Reply{
		Text:      "Hi you",
		ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "f", Args: `{"a":"0123456789"}`}},
		Usage:     &openaitest.Usage{PromptTokens: 10, CompletionTokens: 5, CachedTokens: 4},
	})
	res, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	var events []string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not an SSE data line", line)
		}
		events = append(events, data)
	}
	if events[len(events)-1] != "[DONE]" {
		t.Fatalf("last event %q", events[len(events)-1])
	}
	var text, args strings.Builder
	var finish, usage string
	for _, e := range events[:len(events)-1] {
		var ch struct {
			Object  string
			Choices []struct {
				Delta struct {
					Content   string
					ToolCalls []struct {
						Index    int
						ID       string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
				FinishReason *string `json:"finish_reason"`
			}
			Usage json.RawMessage
		}
		if err := json.Unmarshal([]byte(e), &ch); err != nil {
			t.Fatal(err)
		}
		if ch.Object != "chat.completion.chunk" {
			t.Fatalf("object %q", ch.Object)
		}
		if string(ch.Usage) != "null" {
			usage = string(ch.Usage)
			if len(ch.Choices) != 0 {
				t.Fatalf("usage chunk with choices: %s", e)
			}
		}
		for _, c := range ch.Choices {
			text.WriteString(c.Delta.Content)
			for _, tc := range c.Delta.ToolCalls {
				args.WriteString(tc.Function.Arguments)
			}
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	if text.String() != "Hi you" || args.String() != `{"a":"0123456789"}` || finish != "tool_calls" {
		t.Fatalf("text %q args %q finish %q", text.String(), args.String(), finish)
	}
	if !strings.Contains(usage, `"cached_tokens":4`) || !strings.Contains(usage, `"total_tokens":15`) {
		t.Fatalf("usage %s", usage)
	}
}

func TestValidation(t *testing.T) {
	tests := []struct {
		name, messages, want string
	}{
		{"unanswered call",
			`[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"y"}]`,
			"did not have response messages: c1"},
		{"call never answered",
			`[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]`,
			"did not have response messages: c1"},
		{"orphan result",
			`[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c9","content":"r"}]`,
			"must be a response to a preceeding message with 'tool_calls'"},
		{"empty assistant",
			`[{"role":"user","content":"x"},{"role":"assistant"}]`,
			"expected a string, got null"},
		{"bad role",
			`[{"role":"summary","content":"x"}]`,
			"Supported values are"},
	}
	srv := openaitest.NewServer()
	defer srv.Close()
	for _, tt := range tests {
		res, body := post(t, srv.BaseURL()+"/chat/completions", fmt.Sprintf(`{"model":"m","messages":%s}`, tt.messages))
		if res.StatusCode != 400 || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %s", tt.name, res.StatusCode, body)
		}
	}
	// A valid exchange is accepted, and rejected requests did not use up
	// the script.
	srv.Enqueue(openaitest.Reply{Text: "scripted"})
	res, body := post(t, srv.BaseURL()+"/chat/completions", `{"model":"m","messages":[
		{"role":"user","content":"x"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c2","content":"r2"},
		{"role":"tool","tool_call_id":"c1","content":"r1"},
		{"role":"user","content":"y"}]}`)
	if res.StatusCode != 200 || !strings.Contains(body, `"content":"scripted"`) {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	if n := len(srv.Requests()); n != len(tests)+1 {
		t.Fatalf("recorded %d requests", n)
	}
}

func TestErrorReplies(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.Enqueue(openaitest.Reply{Status: 429, RetryAfter: 1500e6}, openaitest.Reply{Status: 400, Error: "bad thing"})
	res, body := post(t, srv.BaseURL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	if res.StatusCode != 429 || res.Header.Get("Retry-After-Ms") != "1500" || res.Header.Get("Retry-After") != "2" ||
		!strings.Contains(body, `"code":"rate_limit_exceeded"`) {
		t.Fatalf("%d %v %s", res.StatusCode, res.Header, body)
	}
	res, body = post(t, srv.BaseURL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	if res.StatusCode != 400 || res.Header.Get("Retry-After") != "" || !strings.Contains(body, `"message":"bad thing"`) {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	res, _ = post(t, srv.URL+"/v1/embeddings", `{}`)
	if res.StatusCode != 404 {
		t.Fatalf("unknown path: %d", res.StatusCode)
	}
}
