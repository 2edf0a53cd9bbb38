package session_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/export"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

// lineageStore imports n trees of four sessions each (a session, its
// fork, its sub-agent and the sub-agent's own sub-agent) into the
// fixture's store.
func lineageStore(t *testing.T, fx *clitest.Fixture, n int) (mains []*loom.Session) {
	t.Helper()
	at := clitest.Base
	var data []*loom.SessionData
	mk := func(kind, parent string, i int) *loom.Session {
		at = at.Add(time.Second)
		s := &loom.Session{ID: clitest.IDAt(at), UserID: "local", Kind: kind, ParentID: parent, Project: fx.Proj, Cwd: fx.Project,
			Title: fmt.Sprintf("%s %d", kind, i), CreatedAt: at, UpdatedAt: at}
		data = append(data, &loom.SessionData{Session: s})
		return s
	}
	for i := 0; i < n; i++ {
		m := mk(loom.KindMain, "", i)
		mains = append(mains, m)
		mk(loom.KindFork, m.ID, i)
		sub := mk(loom.KindSubagent, m.ID, i)
		mk(loom.KindSubagent, sub.ID, i)
	}
	st := fx.OpenStore(t)
	if err := st.Import(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	st.Close()
	return mains
}

// session list --tree reads the whole lineage of 10,000 sessions in a
// constant number of store calls, not one per session.
func TestSessionListTreeQueries(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	const trees = 2500
	lineageStore(t, fx, trees)
	r, cs := fx.CountingRun(t, "session", "list", "--tree", "--limit", "0", "--json")
	list := clitest.DecodeJSON[[]*loom.Session](t, r.Stdout)
	if len(list) != 4*trees {
		t.Fatalf("--tree listed %d sessions, want %d", len(list), 4*trees)
	}
	// Tree order: every session right after its parent's subtree began.
	pos := make(map[string]int, len(list))
	for i, s := range list {
		pos[s.ID] = i
		if s.ParentID != "" {
			if p, ok := pos[s.ParentID]; !ok || p >= i {
				t.Fatalf("session %d (%s) comes before its parent", i, s.Title)
			}
		}
	}
	if n := cs.Total(); n > 3 {
		t.Fatalf("--tree made %d store calls for %d sessions (%v); want a constant few", n, len(list), cs.Calls())
	}
	// Without --tree, listing is one call.
	_, cs = fx.CountingRun(t, "session", "list", "--limit", "0")
	if n := cs.Total(); n != 1 {
		t.Fatalf("list made %d store calls (%v)", n, cs.Calls())
	}
	// A list of every session already holds the tree: the same order,
	// from the one listing call.
	r, cs = fx.CountingRun(t, "session", "list", "--all-projects", "--tree", "--limit", "0", "--json")
	all := clitest.DecodeJSON[[]*loom.Session](t, r.Stdout)
	if n := cs.Total(); n != 1 {
		t.Fatalf("--all-projects --tree made %d store calls (%v), want 1", n, cs.Calls())
	}
	if len(all) != len(list) {
		t.Fatalf("--all-projects --tree listed %d sessions, want %d", len(all), len(list))
	}
	for i := range all {
		if all[i].ID != list[i].ID {
			t.Fatalf("row %d: %s from the list, %s from Family", i, all[i].Title, list[i].Title)
		}
	}
}

// Exporting a session reads its sub-agent sessions in one call, however
// many there are.
func TestExportFamilyQueries(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	mains := lineageStore(t, fx, 3)
	r, cs := fx.CountingRun(t, "session", "export", mains[1].ID, "--format", "json")
	doc := clitest.DecodeJSON[export.Document](t, r.Stdout)
	// The session and its two generations of sub-agents; not the fork.
	if len(doc.Sessions) != 3 || doc.Sessions[0].Session.ID != mains[1].ID ||
		doc.Sessions[1].Session.Kind != loom.KindSubagent || doc.Sessions[2].Session.ParentID != doc.Sessions[1].Session.ID {
		t.Fatalf("exported %d sessions: %+v", len(doc.Sessions), doc.Sessions)
	}
	if cs.Calls()["Sessions"] != 0 || cs.Calls()["Family"] != 1 {
		t.Fatalf("export read its family with %v", cs.Calls())
	}
}

// A fork made by chat's /fork, by session fork or by a rewind keeps the
// default title the store gives it, and the tree says fork once: "└ fork:
// T", "└ fork 2: T", "└ rewound: T", never "fork: T (fork)".
func TestTreeSaysForkOnce(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Text: "a1"}, openaitest.Reply{Text: "a2"})
	fx.MustLoom(t, "q1\nq2\n/fork 1\n", "chat", "--new", "--name", "Plan the release")
	const id = "Plan the release" // the title is a reference; the forks' differ
	cliFork := strings.TrimSpace(fx.MustLoom(t, "", "session", "fork", id, "--turn", "1").Stdout)
	fx.MustLoom(t, "", "session", "rewind", id, "--turn", "1")
	var titles []string
	for _, s := range clitest.DecodeJSON[[]*loom.Session](t, fx.MustLoom(t, "", "session", "list", "--json").Stdout) {
		titles = append(titles, s.Title)
	}
	slices.Sort(titles)
	if want := []string{"Plan the release", "Plan the release (fork 2)", "Plan the release (fork)", "Plan the release (rewound)"}; !slices.Equal(titles, want) {
		t.Fatalf("titles = %q, want %q", titles, want)
	}
	tree := fx.MustLoom(t, "", "session", "list", "--tree").Stdout
	// Three children of one session: ├ before each but the last, └.
	for _, want := range []string{"\t├ rewound: Plan the release\t", "\t├ fork: Plan the release\t", "\t└ fork 2: Plan the release\t"} {
		if !strings.Contains(tree, want) {
			t.Errorf("tree lacks %q:\n%s", want, tree)
		}
	}
	if strings.Count(tree, "fork") != 2 || !strings.Contains(tree, cliFork) {
		t.Errorf("the tree says fork more than once a line:\n%s", tree)
	}
}
