package agent_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/sqlite"
)

// racers are two services over one store file, each with its own handle
// (so they hold locks apart, as two processes do) and the same clock.
func racers(t *testing.T, p *scripted) (a, b *agent.Service) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessions.db")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	svc := func() *agent.Service {
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		build := func(ctx context.Context, st loom.Store, s *loom.Session, c agent.Choice) (*agent.Loop, error) {
			s.Model, s.Provider = "gpt-4o-mini", p.Name()
			return agent.NewLoop(st, p, "gpt-4o-mini"), nil
		}
		return &agent.Service{Store: st, Build: build, Now: func() time.Time { return at }}
	}
	return svc(), svc()
}

func open(t *testing.T, svc *agent.Service, spec agent.Spec) *agent.Conversation {
	t.Helper()
	c, err := svc.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// Two conversations open a key no session has yet, so each prepares a
// session of its own; the first to send a message creates it. The other's
// first message goes to that session, once it is free: never a conflict.
func TestKeyTakenMeanwhile(t *testing.T) {
	p := (&scripted{}).say("first", loom.Usage{}).say("second", loom.Usage{})
	a, b := racers(t, p)
	spec := agent.Spec{UserID: "alice", Key: "bot:42"}
	first, second := open(t, a, spec), open(t, b, spec)
	if first.Session().ID == second.Session().ID {
		t.Fatal("both conversations prepared the same session")
	}
	if _, err := first.Turn(context.Background(), "one", nil); err != nil {
		t.Fatal(err)
	}
	// While the first holds the session, the second finds it locked.
	if _, err := second.Turn(context.Background(), "two", nil); loom.ErrorCode(err) != loom.ELOCKED {
		t.Fatalf("turn on a session held by another: %v, want locked", err)
	}
	first.Close(context.Background())
	res, err := second.Turn(context.Background(), "two", nil)
	if err != nil || res.Text != "second" {
		t.Fatalf("%+v, %v", res, err)
	}
	s := second.Session()
	if s.ID != first.Session().ID || s.MessageCount != 4 || !second.Resumed() {
		t.Fatalf("the second conversation is in %s with %d messages, want %s with 4", s.ID, s.MessageCount, first.Session().ID)
	}
	found, _ := a.Store.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Key: "bot:42"})
	if len(found) != 1 {
		t.Fatalf("%d sessions with the key", len(found))
	}
}

// New sessions of one project started the same millisecond get keys
// made from the same time; the second takes the next millisecond's.
func TestNewSessionsOfOneMillisecond(t *testing.T) {
	p := (&scripted{}).say("first", loom.Usage{}).say("second", loom.Usage{})
	a, b := racers(t, p)
	spec := agent.Spec{UserID: "alice", Project: loom.Project{ID: "p1", Name: "api", Root: "/src/api"}, New: true}
	first, second := open(t, a, spec), open(t, b, spec)
	if first.Session().Key != second.Session().Key {
		t.Fatalf("keys %q and %q: the clocks differ", first.Session().Key, second.Session().Key)
	}
	for _, c := range []*agent.Conversation{first, second} {
		if _, err := c.Turn(context.Background(), "hello", nil); err != nil {
			t.Fatal(err)
		}
	}
	if k1, k2 := first.Session().Key, second.Session().Key; k1 == k2 || second.Session().ID == first.Session().ID || second.Session().MessageCount != 2 {
		t.Fatalf("sessions %s (%s) and %s (%s)", first.Session().ID, k1, second.Session().ID, k2)
	}
}

// A key that is not a command-line one, first used in a project, makes
// a session of that project; the key still names that one session for
// a caller without a project (the server) and from another project.
func TestKeyMadeInAProject(t *testing.T) {
	p := (&scripted{}).say("one", loom.Usage{}).say("two", loom.Usage{}).say("three", loom.Usage{})
	svc, _ := racers(t, p)
	api := loom.Project{ID: "p1", Name: "api", Root: "/src/api"}
	web := loom.Project{ID: "p2", Name: "web", Root: "/src/web"}
	var ids []string
	for _, spec := range []agent.Spec{
		{UserID: "alice", Key: "notes:today", Project: api, Cwd: "/src/api/pkg"},
		{UserID: "alice", Key: "notes:today"},
		{UserID: "alice", Key: "notes:today", Project: web, Cwd: "/src/web"},
	} {
		c := open(t, svc, spec)
		if _, err := c.Turn(context.Background(), "hi", nil); err != nil {
			t.Fatal(err)
		}
		c.Close(context.Background())
		ids = append(ids, c.Session().ID)
	}
	if ids[1] != ids[0] || ids[2] != ids[0] {
		t.Fatalf("the key named sessions %v", ids)
	}
	s, _ := svc.Store.Session(context.Background(), ids[0])
	if s.Project != api || s.Cwd != "/src/api/pkg" || s.MessageCount != 6 {
		t.Fatalf("session: project %+v, cwd %q, %d messages", s.Project, s.Cwd, s.MessageCount)
	}
}
