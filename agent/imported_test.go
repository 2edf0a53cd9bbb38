package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/sqlite"
)

// importedService is a conversation service over a fresh store holding
// one session imported from Codex: injected context as system messages,
// two prompts, a tool call with its result, on Codex's model.
func importedService(t *testing.T, p *scripted) (*agent.Service, *sqlite.Store, *loom.Session) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	src := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "codex:0199a213-81c0", Title: "Fix the build",
		Project: loom.Project{ID: "p1", Name: "api", Root: "/src/api"}, Cwd: "/src/api", Model: "gpt-5-codex", Provider: "openai",
		Source: &loom.Source{Tool: "codex", Version: "0.39.0", Path: "/home/alice/.codex/sessions/rollout.jsonl"}, CreatedAt: at, UpdatedAt: at}
	msgs := importedMessages(at)
	if err := st.Import(context.Background(), []*loom.SessionData{{Session: src, Messages: msgs}}); err != nil {
		t.Fatal(err)
	}
	src, err = st.Session(context.Background(), src.ID)
	if err != nil {
		t.Fatal(err)
	}
	build := func(ctx context.Context, st loom.Store, s *loom.Session, c agent.Choice) (*agent.Loop, error) {
		s.Model, s.Provider = "gpt-4o-mini", p.Name()
		return agent.NewLoop(st, p, "gpt-4o-mini"), nil
	}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	return &agent.Service{Store: st, Build: build, Now: func() time.Time { return now }}, st, src
}

// importedMessages is a Codex conversation as the importer stores it.
func importedMessages(at time.Time) []*loom.Message {
	n := 0
	msg := func(role string, parts ...loom.Part) *loom.Message {
		n++
		t := at.Add(time.Duration(n) * time.Second)
		for i := range parts {
			parts[i].ID = fmt.Sprintf("codex-part-%d-%d", n, i)
		}
		return &loom.Message{ID: fmt.Sprintf("codex-item-%d", n), Seq: int64(n), Role: role, Parts: parts, CreatedAt: t, CompletedAt: &t}
	}
	text := func(s string) loom.Part { return loom.Part{Type: loom.PartText, Text: s} }
	start, end := at.Add(4*time.Second), at.Add(5*time.Second)
	return []*loom.Message{
		msg(loom.RoleSystem, text("You are Codex, based on GPT-5. CODEX BASE INSTRUCTIONS.")),
		msg(loom.RoleSystem, text("<environment_context>\n  <cwd>/src/api</cwd>\n</environment_context>")),
		msg(loom.RoleUser, text("Why does the build fail?")),
		msg(loom.RoleAssistant, text("Let me run it."), loom.Part{Type: loom.PartTool, CallID: "call_build", Name: "shell", Status: loom.ToolCompleted,
			Input: json.RawMessage(`{"command":["go","build","./..."]}`), Output: json.RawMessage(`"main.go:3: undefined: x"`), StartedAt: &start, EndedAt: &end}),
		msg(loom.RoleSystem, text("<system-reminder>CODEX REMINDER</system-reminder>")),
		msg(loom.RoleUser, text("Fix it then.")),
		msg(loom.RoleAssistant, text("Fixed: x is declared now.")),
	}
}

func sessionCount(t *testing.T, st loom.Store) int {
	t.Helper()
	all, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Archived: loom.WithArchived})
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

// Opening an imported session and leaving without a message stores
// nothing: the fork a conversation continues it in is made by its first
// message, under the id the conversation showed, with the import's
// history, a new command-line key of the import's project and loom's
// own model and provider; the import is left as it was.
func TestImportedSessionForksAtFirstMessage(t *testing.T) {
	p := (&scripted{}).say("Go on from here.", loom.Usage{InputTokens: 100, OutputTokens: 10})
	svc, st, src := importedService(t, p)
	ctx := context.Background()
	spec := agent.Spec{UserID: "alice", Session: src, Project: src.Project, Cwd: src.Cwd}

	for range 3 {
		c, err := svc.Open(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Pending() || !c.Resumed() || c.ContinuesImported().ID != src.ID {
			t.Fatalf("opened: pending %v, resumed %v, continues %v", c.Pending(), c.Resumed(), c.ContinuesImported())
		}
		shown, err := c.Messages(ctx, loom.MessageQuery{})
		if err != nil || len(shown) != src.MessageCount || shown[len(shown)-1].Text() != "Fixed: x is declared now." {
			t.Fatalf("history before the first message: %d messages, %v", len(shown), err)
		}
		c.Close(ctx)
	}
	if n := sessionCount(t, st); n != 1 {
		t.Fatalf("opening the import three times left %d sessions, want only the import", n)
	}

	c, err := svc.Open(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	id := c.Session().ID
	if id == src.ID {
		t.Fatal("the conversation is in the import itself")
	}
	if _, err := c.Turn(ctx, "And now?", nil); err != nil {
		t.Fatal(err)
	}
	if c.Pending() || c.Session().ID != id {
		t.Fatalf("after the first turn: pending %v, in %s, want %s", c.Pending(), c.Session().ID, id)
	}
	if n := sessionCount(t, st); n != 2 {
		t.Fatalf("%d sessions after the first message, want the import and one fork", n)
	}
	fk, err := st.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if fk.Kind != loom.KindFork || fk.ParentID != src.ID || fk.Source != nil || fk.Project != src.Project ||
		!strings.HasPrefix(fk.Key, "cli:api:") || fk.Surface != loom.SurfaceCLI ||
		fk.Model != "gpt-4o-mini" || fk.Provider != "openai" || fk.MessageCount != src.MessageCount+2 || fk.Title != "Fix the build (fork)" {
		t.Fatalf("the fork: %+v", fk)
	}
	msgs, _ := st.Messages(ctx, id, loom.MessageQuery{})
	if got := msgs[len(msgs)-2]; got.Role != loom.RoleUser || got.Text() != "And now?" {
		t.Fatalf("the fork's message %d: %s %q", got.Seq, got.Role, got.Text())
	}
	if again, _ := st.Session(ctx, src.ID); again.MessageCount != src.MessageCount || again.Model != "gpt-5-codex" {
		t.Fatalf("the import changed: %d messages, model %s", again.MessageCount, again.Model)
	}
	// The next turn goes on in the same fork.
	p.say("Still here.", loom.Usage{})
	if _, err := c.Turn(ctx, "Again?", nil); err != nil {
		t.Fatal(err)
	}
	if n := sessionCount(t, st); n != 2 || c.Session().ID != id {
		t.Fatalf("second turn: %d sessions, in %s", n, c.Session().ID)
	}

	// Resumed again, the import is continued in a fork of its own, whose
	// key (made the same millisecond on this clock) is another.
	p.say("Hello again.", loom.Usage{})
	other, err := svc.Open(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if _, err := other.Turn(ctx, "Once more.", nil); err != nil {
		t.Fatal(err)
	}
	if n := sessionCount(t, st); n != 3 || other.Session().Key == fk.Key || other.Session().ParentID != src.ID {
		t.Fatalf("%d sessions; the second fork %+v", n, other.Session())
	}
}

// A key that is not a command-line one (the server's) continues an
// imported session in a fork that takes the key outside every project,
// made by the first message; the next conversation with the key is in
// that fork.
func TestImportedSessionByKeyForksAtFirstMessage(t *testing.T) {
	p := (&scripted{}).say("one", loom.Usage{}).say("two", loom.Usage{})
	svc, st, src := importedService(t, p)
	ctx := context.Background()
	spec := agent.Spec{UserID: "alice", Key: src.Key}

	c, err := svc.Open(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	if n := sessionCount(t, st); n != 1 {
		t.Fatalf("opening by key left %d sessions", n)
	}

	c, err = svc.Open(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	id := c.Session().ID
	if _, err := c.Turn(ctx, "where were we?", nil); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	fk, err := st.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if fk.Key != src.Key || fk.Project.ID != "" || fk.Cwd != "" || fk.ParentID != src.ID || fk.Kind != loom.KindFork || fk.Model != "gpt-4o-mini" {
		t.Fatalf("the fork: %+v", fk)
	}
	next, err := svc.Open(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close(ctx)
	if next.Pending() || next.Session().ID != id {
		t.Fatalf("the key names %s (pending %v), want the fork %s", next.Session().ID, next.Pending(), id)
	}
	if _, err := next.Turn(ctx, "and then?", nil); err != nil {
		t.Fatal(err)
	}
	if n := sessionCount(t, st); n != 2 {
		t.Fatalf("%d sessions, want the import and one fork", n)
	}
}

// The history the model is sent of an imported session holds every user
// message, assistant reply and tool call with its result, and none of
// the system messages the other tool injected: the system prompt is
// loom's own.
func TestImportedSystemMessagesAreNotSent(t *testing.T) {
	p := (&scripted{}).say("ok", loom.Usage{})
	svc, _, src := importedService(t, p)
	ctx := context.Background()
	c, err := svc.Open(ctx, agent.Spec{UserID: "alice", Session: src, Project: src.Project, Cwd: src.Cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Turn(ctx, "Anything else?", nil); err != nil {
		t.Fatal(err)
	}
	req := p.requests[0]
	var roles []string
	for _, m := range req.Messages {
		roles = append(roles, m.Role)
		if m.Role == loom.RoleSystem {
			t.Errorf("system message sent: %q", m.Text())
		}
	}
	if got, want := strings.Join(roles, " "), "user assistant user assistant user"; got != want {
		t.Errorf("roles sent %q, want %q", got, want)
	}
	if strings.Contains(req.System, "CODEX") || !strings.HasPrefix(req.System, "You are loom") {
		t.Errorf("system prompt: %q", req.System)
	}
}
