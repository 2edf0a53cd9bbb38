package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
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
	return &agentFixture{fixture: fx, srv: srv, env: []string{
		"OPENAI_BASE_URL=" + srv.BaseURL(), "OPENAI_API_KEY=test-key", "LOOM_MODEL=gpt-4o-mini",
	}}
}

func (fx *agentFixture) cmd(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command(loomBinary(t), args...)
	cmd.Dir = fx.project
	cmd.Env = fx.binEnv(fx.env...)
	return cmd
}

func (fx *agentFixture) loom(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := fx.cmd(t, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
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

// SIGKILL during a streamed reply leaves the user message and nothing
// partial; the next run -c takes the dead lock over and the provider never
// sees the partial text.
func TestAgentKilledWhileStreaming(t *testing.T) {
	fx := newAgentFixture(t)
	fx.srv.Enqueue(openaitest.Reply{Text: "PARTIAL words that were streamed", Hang: true}, openaitest.Reply{Text: "recovered"})
	cmd := fx.cmd(t, "run", "question before the crash")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once the partial text has reached the terminal.
	br := bufio.NewReader(stdout)
	buf := make([]byte, 64)
	n, _ := io.ReadAtLeast(br, buf, 7)
	if !strings.Contains(string(buf[:n]), "PARTIAL") {
		t.Fatalf("streamed %q", buf[:n])
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	id := sessionOf(t, stderr.String())
	show := fx.mustLoom(t, "", "session", "show", id, "--json")
	var shown struct {
		Messages []*loom.Message `json:"messages"`
	}
	json.Unmarshal([]byte(show.stdout), &shown)
	if len(shown.Messages) != 1 || shown.Messages[0].Role != loom.RoleUser {
		t.Fatalf("after the kill the session holds %d messages: %s", len(shown.Messages), show.stdout)
	}
	r := fx.mustLoom(t, "", "run", "-c", "are you there?")
	if strings.TrimSpace(r.stdout) != "recovered" {
		t.Fatalf("stdout = %q", r.stdout)
	}
	for _, m := range fx.lastRequest(t) {
		if strings.Contains(m.Content, "PARTIAL") {
			t.Fatalf("the provider received the partial text: %+v", fx.lastRequest(t))
		}
	}
	got := fx.lastRequest(t)
	if len(got) != 3 || got[1].Content != "question before the crash" || got[2].Content != "are you there?" {
		t.Fatalf("request after the crash = %+v", got)
	}
}

// SIGKILL during a tool call: the next turn sends the call with an
// "interrupted" result, never an orphaned call.
func TestAgentKilledDuringTool(t *testing.T) {
	fx := newAgentFixture(t)
	fifo := filepath.Join(fx.project, "blocking.pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no fifo:", err)
	}
	fx.srv.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_9", Name: "read_file", Args: `{"path":"blocking.pipe"}`}}},
		openaitest.Reply{Text: "ok, that read was interrupted"},
	)
	cmd := fx.cmd(t, "run", "read the pipe")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fx.waitRequests(t, 1)
	// Wait until the tool part is stored as running (the read blocks on
	// the fifo), then kill.
	deadline := time.Now().Add(15 * time.Second)
	for {
		st := fx.openStore(t)
		var running int
		st.DB().QueryRow(`SELECT count(*) FROM bodies WHERE CAST(parts AS TEXT) LIKE '%"status":"running"%'`).Scan(&running)
		st.Close()
		if running > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tool never ran; stderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	fx.mustLoom(t, "", "run", "-c", "what happened?")
	got := fx.lastRequest(t)
	var call, result *wire
	for i := range got {
		if len(got[i].ToolCalls) > 0 {
			call = &got[i]
		}
		if got[i].Role == "tool" {
			result = &got[i]
		}
	}
	if call == nil || result == nil || result.ToolCallID != "call_9" || !strings.Contains(result.Content, loom.Interrupted) {
		t.Fatalf("after the kill the request was %+v", got)
	}
}

// A second process attaching to a session in use fails with exit 5
// naming the first process.
func TestAgentSecondProcessLocked(t *testing.T) {
	fx := newAgentFixture(t)
	fx.srv.Enqueue(openaitest.Reply{Text: "hello from the first"})
	first := fx.cmd(t, "chat")
	in, _ := first.StdinPipe()
	out, _ := first.StdoutPipe()
	var stderr syncBuffer
	first.Stderr = &stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); first.Wait() }()
	io.WriteString(in, "hi\n")
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.Contains(line, "hello from the first") {
		t.Fatalf("first chat replied %q", line)
	}
	r := fx.loom(t, "", "run", "-c", "me too")
	if r.code != ExitLocked || !strings.Contains(r.stderr, fmt.Sprintf("process %d", first.Process.Pid)) {
		t.Fatalf("second process: exit %d, stderr %q; want 5 naming pid %d", r.code, r.stderr, first.Process.Pid)
	}
	r = fx.loom(t, "hello\n", "chat", "-c")
	if r.code != ExitLocked {
		t.Fatalf("second chat: exit %d, stderr %q", r.code, r.stderr)
	}
}

// 500 or 429 then 200 is retried; a persistent 500 fails clearly and
// keeps the user message.
func TestAgentProviderErrors(t *testing.T) {
	fx := newAgentFixture(t)
	fx.srv.Enqueue(openaitest.Reply{Status: 500}, openaitest.Reply{Text: "after a 500"})
	if r := fx.mustLoom(t, "", "run", "one"); strings.TrimSpace(r.stdout) != "after a 500" {
		t.Fatalf("stdout = %q", r.stdout)
	}
	fx.srv.Enqueue(openaitest.Reply{Status: 429}, openaitest.Reply{Text: "after a 429"})
	if r := fx.mustLoom(t, "", "run", "two"); strings.TrimSpace(r.stdout) != "after a 429" {
		t.Fatalf("stdout = %q", r.stdout)
	}
	if n := len(fx.srv.Requests()); n != 4 {
		t.Fatalf("provider saw %d requests, want 4 (two retried)", n)
	}
	fx.srv.Enqueue(openaitest.Reply{Status: 500, Error: "the model is down"}, openaitest.Reply{Status: 500, Error: "the model is down"}, openaitest.Reply{Status: 500, Error: "the model is down"})
	r := fx.loom(t, "", "run", "three")
	if r.code != ExitError || !strings.Contains(r.stderr, "500") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 1 {
		t.Fatalf("persistent 500: exit %d, stderr %q", r.code, r.stderr)
	}
	id := sessionOf(t, r.stderr)
	show := fx.mustLoom(t, "", "session", "show", id, "--json")
	if !strings.Contains(show.stdout, `"three"`) {
		t.Fatalf("the user message was not kept: %s", show.stdout)
	}
}

// A sub-agent runs in a child session listed under its parent.
func TestAgentSubAgent(t *testing.T) {
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
	if s = showSession(t, fx, anthropicSession); s.Provider != "openai" || s.Model != "gpt-4o-mini" {
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

// With no provider configured (and nothing on the local port), chat and
// run say how to configure one.
func TestAgentNoProvider(t *testing.T) {
	fx := newAgentFixture(t)
	fx.env = []string{"OLLAMA_HOST=127.0.0.1:1"}
	r := fx.loom(t, "", "run", "hello")
	if r.code != ExitError || !strings.Contains(r.stderr, "OPENAI_API_KEY") || !strings.Contains(r.stderr, "ANTHROPIC_API_KEY") || !strings.Contains(r.stderr, "Ollama") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if st := fx.openStore(t); st != nil {
		if l, _ := st.Sessions(t.Context(), loom.SessionFilter{}); len(l) != 0 {
			t.Fatalf("a session was created without a provider")
		}
	}
}

// On a terminal: type a message, see the streamed reply; Ctrl+C during a
// slow reply cancels that turn only; chatting goes on.
func TestAgentChatOnTerminal(t *testing.T) {
	fx := newAgentFixture(t)
	fx.srv.Enqueue(
		openaitest.Reply{Text: "streamed hello"},
		openaitest.Reply{Text: strings.Repeat("slow words ", 200), Delay: 50 * time.Millisecond},
		openaitest.Reply{Text: "still here"},
	)
	fx.extraEnv = fx.env
	p := fx.startPTY(t, "chat")
	p.WaitFor(t, "›")
	p.Send("hello\r")
	p.WaitFor(t, "streamed hello")
	p.Send("tell me slowly\r")
	p.WaitFor(t, "slow words slow words")
	p.Send("\x03") // Ctrl+C
	p.WaitFor(t, "interrupted")
	p.Send("are you there?\r")
	p.WaitFor(t, "still here")
	p.Send("\x04") // Ctrl+D
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, p.Output())
	}
}

// On a terminal, what the model wrote is Markdown wherever it is shown
// again: the history on resume, /history, and /search prints what loom
// search prints (short ids, titles, highlighted matches, no ** markers).
func TestChatMarkdownOnTerminal(t *testing.T) {
	fx := newAgentFixture(t)
	fx.srv.Enqueue(openaitest.Reply{Text: "## Plan\n\nUse a **fake clock** in the loop.\n\n| step | time |\n|------|-----:|\n| one | 1s |\n"})
	r := fx.mustLoom(t, "plan the retry fix\n", "chat", "--new")
	id := sessionOf(t, r.stderr)
	if !strings.Contains(r.stdout, "**fake clock**") {
		t.Fatalf("piped reply is not the plain Markdown:\n%s", r.stdout)
	}

	fx.extraEnv = fx.env
	p := fx.startPTY(t, "chat")
	p.WaitFor(t, "›")
	p.Send("/history 1\r")
	p.Send("/search loop\r")
	p.WaitFor(t, "#2 assistant")
	p.Send("\x04")
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Output())
	}
	out := p.Output()
	if n := strings.Count(out, "Use a fake clock in the loop."); n != 2 {
		t.Fatalf("rendered text shown %d times, want 2 (resume and /history):\n%s", n, out)
	}
	if n := strings.Count(out, "step │ time"); n != 2 {
		t.Fatalf("table not rendered in the history (%d times):\n%s", n, out)
	}
	if !strings.Contains(p.Raw(), "\x1b[1mfake clock\x1b[0m") {
		t.Fatalf("bold not rendered:\n%q", p.Raw())
	}
	hit := regexp.MustCompile(`(?m)^.*#2 assistant · just now\r?$`).FindString(out)
	if !strings.HasPrefix(hit, id[:8]+"  plan the retry fix  #2 assistant") {
		t.Fatalf("/search does not print like loom search (short id, title):\n%s", out)
	}
	if !strings.Contains(p.Raw(), "\x1b[1;33mloop\x1b[0m") {
		t.Fatalf("/search does not highlight the match:\n%q", p.Raw())
	}
}

// loom run - reads the prompt from stdin without the newline that ends
// it; the newlines inside are kept.
func TestRunPromptFromStdin(t *testing.T) {
	fx := newAgentFixture(t)
	r := fx.mustLoom(t, "first line\nsecond line\n\n", "run", "-", "--json")
	req := fx.lastRequest(t)
	if last := req[len(req)-1]; last.Role != "user" || last.Content != "first line\nsecond line" {
		t.Fatalf("the provider received %q", last.Content)
	}
	s := showSession(t, fx, sessionOf(t, r.stderr))
	if s.LastPrompt != "first line\nsecond line" {
		t.Fatalf("stored prompt %q", s.LastPrompt)
	}
}

// A replay log that cannot be written is a warning, once; the turn and
// the session are kept.
func TestReplayLogUnwritableWarns(t *testing.T) {
	fx := newAgentFixture(t)
	// A file where the user's log directory should be: nothing can be
	// created under it, whoever runs the test.
	logs := filepath.Join(fx.home, "state", "logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logs, "local"), []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := fx.mustLoom(t, "", "run", "hello")
	if n := strings.Count(r.stderr, "loom: warning: "); n != 1 || !strings.Contains(r.stderr, "the session is stored, but its replay log is not kept") {
		t.Fatalf("%d warnings:\n%s", n, r.stderr)
	}
	if s := showSession(t, fx, sessionOf(t, r.stderr)); s.MessageCount != 2 {
		t.Fatalf("session has %d messages", s.MessageCount)
	}
}
