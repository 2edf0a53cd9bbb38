package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

// After three turns (one with a tool call) and a restart, the provider
// receives exactly the earlier messages, tool calls and results, in order.
func TestAgentResumeIsFaithful(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	os.WriteFile(filepath.Join(fx.Project, "notes.txt"), []byte("the notes say 42\n"), 0o644)
	fx.Srv.Enqueue(
		openaitest.Reply{Text: "first answer"},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "read_file", Args: `{"path":"notes.txt"}`}}},
		openaitest.Reply{Text: "the file says 42"},
		openaitest.Reply{Text: "third answer"},
		openaitest.Reply{Text: "after restart"},
	)
	r := fx.MustLoom(t, "", "run", "first question")
	id := clitest.SessionOf(t, r.Stderr)
	if strings.TrimSpace(r.Stdout) != "first answer" {
		t.Fatalf("stdout = %q", r.Stdout)
	}
	fx.MustLoom(t, "", "run", "-c", "read notes.txt")
	fx.MustLoom(t, "", "run", "--resume", id, "third question")
	r = fx.MustLoom(t, "", "run", "-c", "fourth question")
	if clitest.SessionOf(t, r.Stderr) != id {
		t.Fatalf("-c did not continue the session")
	}
	got := fx.LastRequest(t)
	want := []clitest.Wire{
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

// A sub-agent runs in a child session listed under its parent.
func TestAgentSubAgent(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_a", Name: "agent", Args: `{"prompt":"count to three","name":"counter"}`}}},
		openaitest.Reply{Text: "one two three", Usage: &openaitest.Usage{PromptTokens: 40, CompletionTokens: 4}},
		openaitest.Reply{Text: "the counter counted"},
	)
	r := fx.MustLoom(t, "", "run", "delegate the counting")
	parent := clitest.SessionOf(t, r.Stderr)
	list := fx.MustLoom(t, "", "session", "list", "--json")
	var sessions []*loom.Session
	json.Unmarshal([]byte(list.Stdout), &sessions)
	var child *loom.Session
	for _, s := range sessions {
		if s.ParentID == parent {
			child = s
		}
	}
	if child == nil || child.Kind != loom.KindSubagent || child.MessageCount != 2 || child.Usage.InputTokens+child.Usage.CacheReadTokens != 40 || child.Usage.OutputTokens != 4 {
		t.Fatalf("child session = %+v", child)
	}
	tree := fx.MustLoom(t, "", "session", "list", "--tree")
	lines := strings.Split(tree.Stdout, "\n")
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
		t.Fatalf("--tree does not list the child under its parent:\n%s", tree.Stdout)
	}
}

// Past the threshold the provider receives the summary and what follows;
// the full history is still shown.
func TestAgentCompaction(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	os.MkdirAll(filepath.Join(fx.Home, "config"), 0o700)
	os.WriteFile(filepath.Join(fx.Home, "config", "config.toml"), []byte("compact_after = 2\n"), 0o600)
	fx.Srv.Enqueue(openaitest.Reply{Text: "a1"}, openaitest.Reply{Text: "a2"}, openaitest.Reply{Text: "a3"},
		openaitest.Reply{Text: "SUMMARY of three turns"}, openaitest.Reply{Text: "a4"})
	id := clitest.SessionOf(t, fx.MustLoom(t, "", "run", "q1").Stderr)
	for _, q := range []string{"q2", "q3", "q4"} {
		fx.MustLoom(t, "", "run", "-c", q)
	}
	got := fx.LastRequest(t)
	if len(got) != 3 || !strings.Contains(got[1].Content, "SUMMARY of three turns") || got[2].Content != "q4" {
		t.Fatalf("request after compaction = %+v", got)
	}
	show := fx.MustLoom(t, "", "session", "show", "--full-history", id)
	for _, s := range []string{"q1", "a1", "q2", "a2", "q3", "a3", "SUMMARY of three turns", "q4", "a4"} {
		if !strings.Contains(show.Stdout, s) {
			t.Fatalf("--full-history lacks %q:\n%s", s, show.Stdout)
		}
	}
}

// Usage totals equal what the provider reported, for both providers.
func TestAgentUsageTotals(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(
		openaitest.Reply{Text: "x", Usage: &openaitest.Usage{PromptTokens: 1000, CompletionTokens: 100, CachedTokens: 200, ReasoningTokens: 10}},
		openaitest.Reply{Text: "y", Usage: &openaitest.Usage{PromptTokens: 2000, CompletionTokens: 50}},
	)
	r := fx.MustLoom(t, "", "run", "one")
	fx.MustLoom(t, "", "run", "-c", "two")
	id := clitest.SessionOf(t, r.Stderr)
	s := clitest.ShowSession(t, fx, id)
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
	fx.Env = []string{"LOOM_PROVIDER=anthropic", "ANTHROPIC_BASE_URL=" + an.URL, "ANTHROPIC_API_KEY=test-key", "LOOM_MODEL=claude-sonnet-4-5"}
	r = fx.MustLoom(t, "", "run", "three")
	fx.MustLoom(t, "", "run", "-c", "four")
	anthropicSession := clitest.SessionOf(t, r.Stderr)
	s = clitest.ShowSession(t, fx, anthropicSession)
	if s.Provider != "anthropic" || s.Usage.InputTokens != 1200 || s.Usage.OutputTokens != 80 || s.Usage.CacheReadTokens != 300 || s.Usage.CacheWriteTokens != 40 || s.Usage.APICalls != 2 || s.Usage.CostUSD <= 0 {
		t.Fatalf("anthropic session = %+v", s)
	}
	// Back on OpenAI only: the Anthropic session continues there.
	fx.Srv.Enqueue(openaitest.Reply{Text: "now on openai"})
	fx.Env = []string{"OPENAI_BASE_URL=" + fx.Srv.BaseURL(), "OPENAI_API_KEY=test-key"}
	r = fx.MustLoom(t, "", "run", "--resume", anthropicSession, "five")
	if strings.TrimSpace(r.Stdout) != "now on openai" {
		t.Fatalf("stdout = %q, stderr %q", r.Stdout, r.Stderr)
	}
	// The server's own model: an OpenAI-compatible server other than
	// OpenAI's is asked which models it has (it lists "fake-model").
	if s = clitest.ShowSession(t, fx, anthropicSession); s.Provider != "openai" || s.Model != "fake-model" {
		t.Fatalf("after switching provider: %s %s", s.Provider, s.Model)
	}
}

// MEMORY.md reaches the system prompt, and /new keeps it.
func TestAgentMemory(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	os.MkdirAll(filepath.Join(fx.Home, "data"), 0o700)
	os.WriteFile(filepath.Join(fx.Home, "data", "MEMORY.md"), []byte("The deploy password is in the vault, never in chat."), 0o600)
	fx.Srv.Enqueue(openaitest.Reply{Text: "noted"}, openaitest.Reply{Text: "still noted"})
	r := fx.MustLoom(t, "first\n/new\nsecond\n", "chat")
	for i, req := range fx.Srv.Requests() {
		sys := clitest.WireMessages(t, req.Body)[0]
		if sys.Role != "system" || !strings.Contains(sys.Content, "never in chat") {
			t.Fatalf("request %d system prompt = %q", i, sys.Content)
		}
	}
	if got := fx.LastRequest(t); len(got) != 2 || got[1].Content != "second" {
		t.Fatalf("/new did not start a new session: %+v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(fx.Home, "data", "MEMORY.md")); !strings.Contains(string(b), "never in chat") {
		t.Fatal("MEMORY.md changed")
	}
	if !strings.Contains(r.Stdout, "noted") || !strings.Contains(r.Stdout, "still noted") {
		t.Fatalf("stdout = %q", r.Stdout)
	}
}
