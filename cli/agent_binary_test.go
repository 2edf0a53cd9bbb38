package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/openai/openaitest"
)

// agentFixture is an empty LOOM_HOME and project with loom pointed at a
// fake OpenAI server (the official SDK parses its real wire format).
type agentFixture struct {
	*fixture
	srv *openaitest.Server
	env []string
}

func newAgentFixture(t *testing.T) *agentFixture {
	t.Helper()
	fx := newEmptyFixture(t)
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	return &agentFixture{fixture: fx, srv: srv, env: providerEnv(srv)}
}

// providerEnv points a loom process at the fake OpenAI server srv.
func providerEnv(srv *openaitest.Server) []string {
	return []string{"OPENAI_BASE_URL=" + srv.BaseURL(), "OPENAI_API_KEY=test-key", "LOOM_MODEL=gpt-4o-mini"}
}

func (fx *agentFixture) cmd(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command(loomBinary(t), args...)
	cmd.Dir = fx.project
	cmd.Env = fx.binEnv(fx.env...)
	return cmd
}

func (fx *agentFixture) loom(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return execCmd(t, fx.cmd(t, args...), stdin)
}

func (fx *agentFixture) mustLoom(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	r := fx.loom(t, stdin, args...)
	if r.code != 0 {
		t.Fatalf("loom %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// wire is one message of a request as the provider received it.
type wire struct {
	Role, Content string
	ToolCalls     []string // name(args)
	ToolCallID    string
}

func wireMessages(t *testing.T, body map[string]any) []wire {
	t.Helper()
	var out []wire
	for _, raw := range body["messages"].([]any) {
		m := raw.(map[string]any)
		w := wire{Role: m["role"].(string)}
		switch c := m["content"].(type) {
		case string:
			w.Content = c
		case []any:
			for _, p := range c {
				if pm, ok := p.(map[string]any); ok {
					if s, ok := pm["text"].(string); ok {
						w.Content += s
					}
				}
			}
		}
		if tcs, ok := m["tool_calls"].([]any); ok {
			for _, tc := range tcs {
				fn := tc.(map[string]any)["function"].(map[string]any)
				w.ToolCalls = append(w.ToolCalls, fmt.Sprintf("%s(%s)", fn["name"], fn["arguments"]))
			}
		}
		if id, ok := m["tool_call_id"].(string); ok {
			w.ToolCallID = id
		}
		out = append(out, w)
	}
	return out
}

func (fx *agentFixture) lastRequest(t *testing.T) []wire {
	t.Helper()
	reqs := fx.srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("the provider received no request")
	}
	return wireMessages(t, reqs[len(reqs)-1].Body)
}

func sessionOf(t *testing.T, stderr string) string {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if id, ok := strings.CutPrefix(line, "session "); ok {
			return strings.TrimSpace(id)
		}
	}
	t.Fatalf("no session id on stderr: %q", stderr)
	return ""
}

// After three turns (one with a tool call) and a restart, the provider
// receives exactly the earlier messages, tool calls and results, in order.
func TestAgentResumeIsFaithful(t *testing.T) {
	t.Parallel()
	fx := newAgentFixture(t)
	os.WriteFile(filepath.Join(fx.project, "notes.txt"), []byte("the notes say 42\n"), 0o644)
	fx.srv.Enqueue(
		openaitest.Reply{Text: "first answer"},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "read_file", Args: `{"path":"notes.txt"}`}}},
		openaitest.Reply{Text: "the file says 42"},
		openaitest.Reply{Text: "third answer"},
		openaitest.Reply{Text: "after restart"},
	)
	r := fx.mustLoom(t, "", "run", "first question")
	id := sessionOf(t, r.stderr)
	if strings.TrimSpace(r.stdout) != "first answer" {
		t.Fatalf("stdout = %q", r.stdout)
	}
	fx.mustLoom(t, "", "run", "-c", "read notes.txt")
	fx.mustLoom(t, "", "run", "--resume", id, "third question")
	r = fx.mustLoom(t, "", "run", "-c", "fourth question")
	if sessionOf(t, r.stderr) != id {
		t.Fatalf("-c did not continue the session")
	}
	got := fx.lastRequest(t)
	want := []wire{
		{Role: "system"},
		{Role: "user", Content: "first question"},
		{Role: "assistant", Content: "first answer"},
		{Role: "user", Content: "read notes.txt"},
		{Role: "assistant", ToolCalls: []string{`read_file({"path":"notes.txt"})`}},
		{Role: "tool", Content: "the notes say 42\n", ToolCallID: "call_1"},
		{Role: "assistant", Content: "the file says 42"},
		{Role: "user", Content: "third question"},
		{Role: "assistant", Content: "third answer"},
		{Role: "user", Content: "fourth question"},
	}
	if len(got) != len(want) {
		t.Fatalf("request has %d messages, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if i == 0 {
			if g.Role != "system" {
				t.Fatalf("first message is %s", g.Role)
			}
			continue
		}
		if g.Role != w.Role || g.Content != w.Content || strings.Join(g.ToolCalls, ";") != strings.Join(w.ToolCalls, ";") || g.ToolCallID != w.ToolCallID {
			t.Fatalf("message %d = %+v, want %+v", i, g, w)
		}
	}
}

// waitRequests waits until the provider has received n requests.
func (fx *agentFixture) waitRequests(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(fx.srv.Requests()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("provider received %d requests, want %d", len(fx.srv.Requests()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A sub-agent runs in a child session listed under its parent.
func TestAgentSubAgent(t *testing.T) {
	t.Parallel()
	fx := newAgentFixture(t)
	fx.srv.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_a", Name: "agent", Args: `{"prompt":"count to three","name":"counter"}`}}},
		openaitest.Reply{Text: "one two three", Usage: &openaitest.Usage{PromptTokens: 40, CompletionTokens: 4}},
		openaitest.Reply{Text: "the counter counted"},
	)
	r := fx.mustLoom(t, "", "run", "delegate the counting")
	parent := sessionOf(t, r.stderr)
	list := fx.mustLoom(t, "", "session", "list", "--json")
	var sessions []*loom.Session
	json.Unmarshal([]byte(list.stdout), &sessions)
	var child *loom.Session
	for _, s := range sessions {
		if s.ParentID == parent {
			child = s
		}
	}
	if child == nil || child.Kind != loom.KindSubagent || child.MessageCount != 2 || child.Usage.InputTokens+child.Usage.CacheReadTokens != 40 || child.Usage.OutputTokens != 4 {
		t.Fatalf("child session = %+v", child)
	}
	tree := fx.mustLoom(t, "", "session", "list", "--tree")
	lines := strings.Split(tree.stdout, "\n")
	pi, ci := -1, -1
	for i, l := range lines {
		if strings.Contains(l, parent) {
			pi = i
		}
		if strings.Contains(l, child.ID) {
			ci = i
		}
	}
	if pi < 0 || ci != pi+1 {
		t.Fatalf("--tree does not list the child under its parent:\n%s", tree.stdout)
	}
}

// Past the threshold the provider receives the summary and what follows;
// the full history is still shown.
func TestAgentCompaction(t *testing.T) {
	t.Parallel()
	fx := newAgentFixture(t)
	os.MkdirAll(filepath.Join(fx.home, "config"), 0o700)
	os.WriteFile(filepath.Join(fx.home, "config", "config.toml"), []byte("compact_after = 2\n"), 0o600)
	fx.srv.Enqueue(openaitest.Reply{Text: "a1"}, openaitest.Reply{Text: "a2"}, openaitest.Reply{Text: "a3"},
		openaitest.Reply{Text: "SUMMARY of three turns"}, openaitest.Reply{Text: "a4"})
	id := sessionOf(t, fx.mustLoom(t, "", "run", "q1").stderr)
	for _, q := range []string{"q2", "q3", "q4"} {
		fx.mustLoom(t, "", "run", "-c", q)
	}
	got := fx.lastRequest(t)
	if len(got) != 3 || !strings.Contains(got[1].Content, "SUMMARY of three turns") || got[2].Content != "q4" {
		t.Fatalf("request after compaction = %+v", got)
	}
	show := fx.mustLoom(t, "", "session", "show", "--full-history", id)
	for _, s := range []string{"q1", "a1", "q2", "a2", "q3", "a3", "SUMMARY of three turns", "q4", "a4"} {
		if !strings.Contains(show.stdout, s) {
			t.Fatalf("--full-history lacks %q:\n%s", s, show.stdout)
		}
	}
}

// Usage totals equal what the provider reported, for both providers.
func TestAgentUsageTotals(t *testing.T) {
	t.Parallel()
	fx := newAgentFixture(t)
	fx.srv.Enqueue(
		openaitest.Reply{Text: "x", Usage: &openaitest.Usage{PromptTokens: 1000, CompletionTokens: 100, CachedTokens: 200, ReasoningTokens: 10}},
		openaitest.Reply{Text: "y", Usage: &openaitest.Usage{PromptTokens: 2000, CompletionTokens: 50}},
	)
	r := fx.mustLoom(t, "", "run", "one")
	fx.mustLoom(t, "", "run", "-c", "two")
	id := sessionOf(t, r.stderr)
	s := showSession(t, fx, id)
	// Input tokens exclude cache reads: 800 + 2000.
	if s.Usage.InputTokens != 2800 || s.Usage.CacheReadTokens != 200 || s.Usage.OutputTokens != 150 || s.Usage.ReasoningTokens != 10 || s.Usage.APICalls != 2 || s.Usage.CostUSD <= 0 {
		t.Fatalf("openai usage = %+v", s.Usage)
	}

	an := anthropictest.NewServer()
	defer an.Close()
	an.Enqueue(
		anthropictest.Reply{Text: "x", Usage: &anthropictest.Usage{InputTokens: 500, OutputTokens: 60, CacheReadInputTokens: 300, CacheCreationInputTokens: 40}},
		anthropictest.Reply{Text: "y", Usage: &anthropictest.Usage{InputTokens: 700, OutputTokens: 20}},
	)
	fx.env = []string{"LOOM_PROVIDER=anthropic", "ANTHROPIC_BASE_URL=" + an.URL, "ANTHROPIC_API_KEY=test-key", "LOOM_MODEL=claude-sonnet-4-5"}
	r = fx.mustLoom(t, "", "run", "three")
	fx.mustLoom(t, "", "run", "-c", "four")
	anthropicSession := sessionOf(t, r.stderr)
	s = showSession(t, fx, anthropicSession)
	if s.Provider != "anthropic" || s.Usage.InputTokens != 1200 || s.Usage.OutputTokens != 80 || s.Usage.CacheReadTokens != 300 || s.Usage.CacheWriteTokens != 40 || s.Usage.APICalls != 2 || s.Usage.CostUSD <= 0 {
		t.Fatalf("anthropic session = %+v", s)
	}
	// Back on OpenAI only: the Anthropic session continues there.
	fx.srv.Enqueue(openaitest.Reply{Text: "now on openai"})
	fx.env = []string{"OPENAI_BASE_URL=" + fx.srv.BaseURL(), "OPENAI_API_KEY=test-key"}
	r = fx.mustLoom(t, "", "run", "--resume", anthropicSession, "five")
	if strings.TrimSpace(r.stdout) != "now on openai" {
		t.Fatalf("stdout = %q, stderr %q", r.stdout, r.stderr)
	}
	// The server's own model: an OpenAI-compatible server other than
	// OpenAI's is asked which models it has (it lists "fake-model").
	if s = showSession(t, fx, anthropicSession); s.Provider != "openai" || s.Model != "fake-model" {
		t.Fatalf("after switching provider: %s %s", s.Provider, s.Model)
	}
}

func showSession(t *testing.T, fx *agentFixture, id string) *loom.Session {
	t.Helper()
	var shown struct {
		Session *loom.Session `json:"session"`
	}
	if err := json.Unmarshal([]byte(fx.mustLoom(t, "", "session", "show", id, "--json").stdout), &shown); err != nil {
		t.Fatal(err)
	}
	return shown.Session
}

// MEMORY.md reaches the system prompt, and /new keeps it.
func TestAgentMemory(t *testing.T) {
	t.Parallel()
	fx := newAgentFixture(t)
	os.MkdirAll(filepath.Join(fx.home, "data"), 0o700)
	os.WriteFile(filepath.Join(fx.home, "data", "MEMORY.md"), []byte("The deploy password is in the vault, never in chat."), 0o600)
	fx.srv.Enqueue(openaitest.Reply{Text: "noted"}, openaitest.Reply{Text: "still noted"})
	r := fx.mustLoom(t, "first\n/new\nsecond\n", "chat")
	for i, req := range fx.srv.Requests() {
		sys := wireMessages(t, req.Body)[0]
		if sys.Role != "system" || !strings.Contains(sys.Content, "never in chat") {
			t.Fatalf("request %d system prompt = %q", i, sys.Content)
		}
	}
	if got := fx.lastRequest(t); len(got) != 2 || got[1].Content != "second" {
		t.Fatalf("/new did not start a new session: %+v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(fx.home, "data", "MEMORY.md")); !strings.Contains(string(b), "never in chat") {
		t.Fatal("MEMORY.md changed")
	}
	if !strings.Contains(r.stdout, "noted") || !strings.Contains(r.stdout, "still noted") {
		t.Fatalf("stdout = %q", r.stdout)
	}
}
