package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/replaylog"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/sqlite"
)

// scripted is a model service stand-in: it answers with queued responses
// and records every request. (The HTTP-level fakes of the real services
// are used by the command-line tests.)
type scripted struct {
	mu       sync.Mutex
	replies  []func(ctx context.Context, onEvent func(loom.StreamEvent)) (*loom.ModelResponse, error)
	requests []*loom.ModelRequest
}

func (p *scripted) Name() string { return "openai" }

func (p *scripted) Stream(ctx context.Context, req *loom.ModelRequest, onEvent func(loom.StreamEvent)) (*loom.ModelResponse, error) {
	p.mu.Lock()
	cp := *req
	cp.Messages = append([]*loom.Message{}, req.Messages...)
	p.requests = append(p.requests, &cp)
	if len(p.replies) == 0 {
		p.mu.Unlock()
		return nil, errors.New("no scripted reply left")
	}
	r := p.replies[0]
	p.replies = p.replies[1:]
	p.mu.Unlock()
	if onEvent == nil {
		onEvent = func(loom.StreamEvent) {}
	}
	return r(ctx, onEvent)
}

func (p *scripted) say(text string, u loom.Usage) *scripted {
	p.replies = append(p.replies, func(ctx context.Context, on func(loom.StreamEvent)) (*loom.ModelResponse, error) {
		for _, w := range strings.SplitAfter(text, " ") {
			on(loom.StreamEvent{Kind: loom.EventText, Text: w})
		}
		return &loom.ModelResponse{Parts: []loom.Part{{Type: loom.PartText, Text: text}}, Usage: u, Model: "gpt-4o-mini"}, nil
	})
	return p
}

func (p *scripted) call(name, input string) *scripted {
	p.replies = append(p.replies, func(ctx context.Context, on func(loom.StreamEvent)) (*loom.ModelResponse, error) {
		return &loom.ModelResponse{Parts: []loom.Part{{Type: loom.PartTool, CallID: "call_" + name, Name: name, Input: json.RawMessage(input)}},
			Usage: loom.Usage{InputTokens: 10, OutputTokens: 2}, StopReason: "tool_calls"}, nil
	})
	return p
}

func (p *scripted) hang() *scripted {
	p.replies = append(p.replies, func(ctx context.Context, on func(loom.StreamEvent)) (*loom.ModelResponse, error) {
		on(loom.StreamEvent{Kind: loom.EventText, Text: "partial text that must not be stored"})
		<-ctx.Done()
		return nil, ctx.Err()
	})
	return p
}

func setup(t *testing.T, p *scripted) (*agent.Loop, *sqlite.Store, *loom.Session) {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	l := agent.NewLoop(st, p, "gpt-4o-mini")
	l.MemoryFile = filepath.Join(dir, "MEMORY.md")
	l.UserFile = filepath.Join(dir, "USER.md")
	l.LogFor = func(s *loom.Session) *replaylog.Log {
		lg, _ := replaylog.Open(filepath.Join(dir, "logs", s.ID+".jsonl"))
		return lg
	}
	s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:test", Cwd: dir}
	return l, st, s
}

func TestTurnStoresWholeMessages(t *testing.T) {
	p := (&scripted{}).say("hello there friend", loom.Usage{InputTokens: 1000, OutputTokens: 100})
	l, st, s := setup(t, p)
	var streamed strings.Builder
	res, err := l.Turn(context.Background(), s, "hi", func(e agent.Event) {
		if e.Kind == loom.EventText {
			streamed.WriteString(e.Text)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if streamed.String() != "hello there friend" || res.Text != "hello there friend" {
		t.Fatalf("streamed %q, result %q", streamed.String(), res.Text)
	}
	msgs, _ := st.Messages(context.Background(), s.ID, loom.MessageQuery{})
	if len(msgs) != 2 || msgs[0].Role != loom.RoleUser || msgs[1].Text() != "hello there friend" {
		t.Fatalf("stored %+v", msgs)
	}
	m := msgs[1]
	if m.Usage.InputTokens != 1000 || m.Usage.APICalls != 1 || m.Usage.CostUSD <= 0 || m.Provider != "openai" || m.Model != "gpt-4o-mini" {
		t.Fatalf("usage and cost not recorded: %+v", m)
	}
	if m.Parts[0].Type != loom.PartStepStart || m.Parts[len(m.Parts)-1].Type != loom.PartStepFinish || m.Parts[len(m.Parts)-1].Usage.InputTokens != 1000 {
		t.Fatalf("step parts: %+v", m.Parts)
	}
	got, _ := st.Session(context.Background(), s.ID)
	if got.Usage != m.Usage {
		t.Fatalf("session usage %+v, message usage %+v", got.Usage, m.Usage)
	}
	// The replay log has the turn.
	b, err := os.ReadFile(filepath.Join(filepath.Dir(l.MemoryFile), "logs", s.ID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil || e["timestamp"] == nil {
			t.Fatalf("bad log line %q", line)
		}
		k := e["kind"].(string)
		if k == "step" {
			k += ":" + e["type"].(string)
		}
		kinds = append(kinds, k)
	}
	if want := "session:start user_message step:agent_start step:text final_result"; strings.Join(kinds, " ") != want {
		t.Fatalf("log kinds = %v, want %s", kinds, want)
	}
}

func TestToolCallsAreStoredAndSentBack(t *testing.T) {
	p := (&scripted{}).call("read_file", `{"path":"notes.txt"}`).say("the file says hello", loom.Usage{})
	l, st, s := setup(t, p)
	os.WriteFile(filepath.Join(s.Cwd, "notes.txt"), []byte("hello from the file\n"), 0o644)
	var events []string
	if _, err := l.Turn(context.Background(), s, "read notes.txt", func(e agent.Event) {
		if e.Kind == agent.EventToolStart || e.Kind == agent.EventToolEnd {
			events = append(events, e.Kind+":"+e.Tool+":"+e.Status)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(events, " ") != "tool_start:read_file: tool_end:read_file:completed" {
		t.Fatalf("events = %v", events)
	}
	msgs, _ := st.Messages(context.Background(), s.ID, loom.MessageQuery{})
	var tool loom.Part
	for _, p := range msgs[1].Parts {
		if p.Type == loom.PartTool {
			tool = p
		}
	}
	if tool.Status != loom.ToolCompleted || !strings.Contains(string(tool.Output), "hello from the file") || tool.StartedAt == nil || tool.EndedAt == nil {
		t.Fatalf("tool part = %+v", tool)
	}
	// The second request carried the call and its result.
	second := p.requests[1]
	if len(second.Messages) != 2 || second.Messages[1].Parts[1].Status != loom.ToolCompleted {
		t.Fatalf("second request history = %+v", second.Messages)
	}
}

func TestCancelledStreamStoresNothingPartial(t *testing.T) {
	p := (&scripted{}).hang()
	l, st, s := setup(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := l.Turn(ctx, s, "a question", func(e agent.Event) {
		if e.Kind == loom.EventText {
			cancel() // Ctrl+C while the reply streams
		}
	})
	if !agent.IsCancelled(err) {
		t.Fatalf("err = %v, want cancelled", err)
	}
	msgs, _ := st.Messages(context.Background(), s.ID, loom.MessageQuery{})
	if len(msgs) != 1 || msgs[0].Role != loom.RoleUser {
		t.Fatalf("after cancel: %+v", msgs)
	}
}

func TestCancelledToolIsInterrupted(t *testing.T) {
	p := (&scripted{}).call("agent", `{"prompt":"wait forever"}`)
	p.hang() // the sub-agent's model call hangs
	l, st, s := setup(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := l.Turn(ctx, s, "delegate", func(e agent.Event) {
			if e.Kind == loom.EventText {
				cancel() // the sub-agent is streaming: press Ctrl+C
			}
		})
		done <- err
	}()
	if err := <-done; !agent.IsCancelled(err) {
		t.Fatalf("err = %v", err)
	}
	msgs, _ := st.Messages(context.Background(), s.ID, loom.MessageQuery{})
	tools := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type != loom.PartTool {
				continue
			}
			tools++
			if p.Status != loom.ToolError || p.Error != loom.Interrupted {
				t.Fatalf("tool part after cancel = %+v", p)
			}
		}
	}
	if tools != 1 {
		t.Fatalf("%d tool parts stored, want the one cancelled call", tools)
	}
}

func TestSubAgentRunsInChildSession(t *testing.T) {
	p := (&scripted{}).call("agent", `{"prompt":"count to three, slowly, and say each number on a line of its own so that the parent can read it","name":"counter"}`).
		say("one two three", loom.Usage{InputTokens: 50, OutputTokens: 5}).
		say("the sub-agent counted", loom.Usage{InputTokens: 80, OutputTokens: 8})
	l, st, s := setup(t, p)
	res, err := l.Turn(context.Background(), s, "delegate counting", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "the sub-agent counted" {
		t.Fatalf("final = %q", res.Text)
	}
	kids, _ := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", ParentID: s.ID})
	if len(kids) != 1 {
		t.Fatalf("children = %d", len(kids))
	}
	child := kids[0]
	if child.Kind != loom.KindSubagent || child.MessageCount != 2 || child.Usage.InputTokens != 50 || child.Lock != nil {
		t.Fatalf("child = %+v", child)
	}
	// Titled as every session is from its first prompt (loom.TitleFrom),
	// after the sub-agent's name.
	if want := "counter: count to three, slowly, and say each number on a line of…"; child.Title != want {
		t.Fatalf("child title = %q, want %q", child.Title, want)
	}
	msgs, _ := st.Messages(context.Background(), s.ID, loom.MessageQuery{})
	var tool, link loom.Part
	for _, p := range msgs[1].Parts {
		switch p.Type {
		case loom.PartTool:
			tool = p
		case loom.PartAgent:
			link = p
		}
	}
	if link.SessionID != child.ID || link.Name != "counter" || string(tool.Output) != `"one two three"` {
		t.Fatalf("parent parts: tool %+v, agent %+v", tool, link)
	}
	// The sub-agent was not offered the agent tool.
	for _, spec := range p.requests[1].Tools {
		if spec.Name == "agent" {
			t.Fatalf("sub-agent offered the agent tool")
		}
	}
}

// A turn says once, before the model is called, that its user message is
// stored and in which session; a sub-agent's turn does not say it.
func TestTurnSaysOnceWhereItIsStored(t *testing.T) {
	p := (&scripted{}).call("agent", `{"prompt":"count to three","name":"counter"}`).
		say("one two three", loom.Usage{}).
		say("the sub-agent counted", loom.Usage{})
	l, st, s := setup(t, p)
	var stored []string
	_, err := l.Turn(context.Background(), s, "delegate counting", func(e agent.Event) {
		if e.Kind != agent.EventStored {
			return
		}
		stored = append(stored, e.SessionID)
		msgs, err := st.Messages(context.Background(), e.SessionID, loom.MessageQuery{})
		if err != nil || len(msgs) != 1 || msgs[0].Text() != "delegate counting" || len(p.requests) != 0 {
			t.Errorf("when the turn says it is stored: messages %v (%v), %d model calls", msgs, err, len(p.requests))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 1 || stored[0] != s.ID {
		t.Fatalf("stored events for sessions %q, want one for %s", stored, s.ID)
	}
}

func TestCompactionAtThreshold(t *testing.T) {
	p := &scripted{}
	for i := 0; i < 3; i++ {
		p.say("answer", loom.Usage{})
	}
	p.say("SUMMARY: three answers", loom.Usage{InputTokens: 7})
	p.say("after compaction", loom.Usage{})
	l, st, s := setup(t, p)
	l.CompactItems = 2
	for _, q := range []string{"one", "two", "three", "four"} {
		if _, err := l.Turn(context.Background(), s, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	last := p.requests[len(p.requests)-1]
	if len(last.Messages) != 2 || last.Messages[0].Role != loom.RoleSummary || last.Messages[1].Text() != "four" {
		t.Fatalf("request after compaction = %d messages, first %s", len(last.Messages), last.Messages[0].Role)
	}
	all, _ := st.Messages(context.Background(), s.ID, loom.MessageQuery{})
	if len(all) != 9 {
		t.Fatalf("history kept %d messages, want 9", len(all))
	}
	got, _ := st.Session(context.Background(), s.ID)
	if got.Usage.Compactions != 1 {
		t.Fatalf("compactions = %d", got.Usage.Compactions)
	}
}

func TestMemoryReachesSystemPrompt(t *testing.T) {
	p := (&scripted{}).call("memory", `{"action":"append","file":"memory","text":"The user's cat is called Miso."}`).say("noted", loom.Usage{}).say("Miso", loom.Usage{})
	l, _, s := setup(t, p)
	os.WriteFile(l.UserFile, []byte("Name: Alice"), 0o644)
	if _, err := l.Turn(context.Background(), s, "remember my cat is Miso", nil); err != nil {
		t.Fatal(err)
	}
	// A new session still sees memory.
	fresh := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:test:2"}
	if _, err := l.Turn(context.Background(), fresh, "what is my cat called?", nil); err != nil {
		t.Fatal(err)
	}
	sys := p.requests[len(p.requests)-1].System
	if !strings.Contains(sys, "Miso") || !strings.Contains(sys, "Name: Alice") {
		t.Fatalf("system prompt lacks memory: %q", sys)
	}
}

// With Redact set, the memory files reach the provider redacted, in the
// system prompt and through the memory tool.
func TestMemoryReachesProviderRedacted(t *testing.T) {
	key := "ghp_" + strings.Repeat("Mq4", 12)
	p := (&scripted{}).call("memory", `{"action":"read","file":"memory"}`).say("done", loom.Usage{})
	l, _, s := setup(t, p)
	l.Redact = secrets.Default()
	os.WriteFile(l.MemoryFile, []byte("deploys read GITHUB_TOKEN="+key+"\n"), 0o644)
	os.WriteFile(l.UserFile, []byte("Alice; her token is "+key), 0o644)
	if _, err := l.Turn(context.Background(), s, "what does the deploy read?", nil); err != nil {
		t.Fatal(err)
	}
	for i, req := range p.requests {
		b, _ := json.Marshal(req)
		if strings.Contains(string(b), key[4:]) {
			t.Errorf("request %d holds the key: %s", i+1, b)
		}
		if !strings.Contains(req.System, "[REDACTED:github-token]") || !strings.Contains(req.System, "Alice") {
			t.Errorf("request %d's system prompt lacks the memory files, redacted: %q", i+1, req.System)
		}
	}
	last := p.requests[len(p.requests)-1]
	if b, _ := json.Marshal(last.Messages); !strings.Contains(string(b), `"output":"deploys read GITHUB_TOKEN=[REDACTED:github-token]`) {
		t.Errorf("the memory tool's result is not there, redacted: %s", b)
	}
}

func TestProviderErrorKeepsUserMessage(t *testing.T) {
	p := &scripted{}
	p.replies = append(p.replies, func(ctx context.Context, on func(loom.StreamEvent)) (*loom.ModelResponse, error) {
		on(loom.StreamEvent{Kind: loom.EventText, Text: "half"})
		return nil, errors.New("openai: 500 Internal Server Error")
	})
	l, st, s := setup(t, p)
	if _, err := l.Turn(context.Background(), s, "question", nil); err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("err = %v", err)
	}
	msgs, _ := st.Messages(context.Background(), s.ID, loom.MessageQuery{})
	if len(msgs) != 1 || msgs[0].Text() != "question" {
		t.Fatalf("after provider error: %+v", msgs)
	}
}
