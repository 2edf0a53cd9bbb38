package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

func listIDs(t *testing.T, fx *clitest.Fixture, args ...string) []string {
	t.Helper()
	var out []string
	for _, s := range clitest.DecodeJSON[[]*loom.Session](t, fx.MustRun(t, append([]string{"session", "list", "--json"}, args...)...)) {
		out = append(out, s.ID)
	}
	return out
}

// archive and unarchive: hidden from list and search, shown by
// --archived, found by reference, kept by prune; --json prints the
// sessions with archived_at.
func TestArchiveCommands(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	r := fx.Run(t, "session", "archive", fx.Twin1.ID, "--json")
	if r.Code != 0 {
		t.Fatalf("archive: %d %s", r.Code, r.Stderr)
	}
	var raw []map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &raw); err != nil || len(raw) != 1 || raw[0]["archived_at"] == nil || raw[0]["id"] != fx.Twin1.ID {
		t.Fatalf("archive --json = %s", r.Stdout)
	}
	if l := listIDs(t, fx); slices.Contains(l, fx.Twin1.ID) || !slices.Contains(l, fx.Twin2.ID) {
		t.Fatalf("list after archive = %v", l)
	}
	if l := listIDs(t, fx, "--archived"); !slices.Equal(l, []string{fx.Twin1.ID}) {
		t.Fatalf("list --archived = %v", l)
	}
	if out := fx.MustRun(t, "search", "first twin", "--json"); strings.Contains(out, fx.Twin1.ID) {
		t.Fatalf("search finds an archived session: %s", out)
	}
	if out := fx.MustRun(t, "search", "first twin", "--archived", "--json"); !strings.Contains(out, fx.Twin1.ID) {
		t.Fatalf("search --archived misses it: %s", out)
	}
	if out := fx.MustRun(t, "session", "show", fx.Twin1.ID[:8]); !strings.Contains(out, "archived") {
		t.Fatalf("show does not say archived:\n%s", out)
	}
	if out := fx.MustRun(t, "session", "prune", "--older-than", "0s", "--dry-run", "--json"); strings.Contains(out, fx.Twin1.ID) {
		t.Fatalf("prune would take an archived session: %s", out)
	}
	// A bad reference among several changes none.
	if r := fx.Run(t, "session", "archive", fx.Twin2.ID, "no-such-session"); r.Code != cli.ExitNotFound {
		t.Fatalf("archive of an unknown ref: %d %s", r.Code, r.Stderr)
	}
	if l := listIDs(t, fx); !slices.Contains(l, fx.Twin2.ID) {
		t.Fatalf("a failed archive archived the first ref")
	}
	fx.MustRun(t, "session", "unarchive", fx.Twin1.ID)
	if l := listIDs(t, fx); !slices.Contains(l, fx.Twin1.ID) {
		t.Fatalf("list after unarchive = %v", l)
	}
	if r := fx.Run(t, "session", "archive"); r.Code != cli.ExitUsage {
		t.Fatalf("archive without REF: %d", r.Code)
	}
}

// session rewind: the session keeps its id and key, the later turns go
// to a fork --tree shows, --json has both; a bad turn is a usage error,
// and without --turn off a terminal too.
func TestRewindCommand(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	r := fx.Run(t, "session", "rewind", fx.Main.ID, "--turn", "1", "--json")
	if r.Code != 0 {
		t.Fatalf("rewind: %d %s", r.Code, r.Stderr)
	}
	res := clitest.DecodeJSON[clitest.RewindResult](t, r.Stdout)
	if res.Session.ID != fx.Main.ID || res.Session.TurnCount != 1 || res.Session.Key != fx.Main.Key {
		t.Fatalf("rewound session = %+v", res.Session)
	}
	if res.Fork.Kind != loom.KindFork || res.Fork.ParentID != fx.Main.ID || res.Fork.ForkTurn != 1 || res.Fork.TurnCount != fx.Main.TurnCount ||
		res.Fork.MessageCount != fx.Main.MessageCount || res.Fork.Title != "Fix the flaky test (rewound)" {
		t.Fatalf("rewound fork = %+v", res.Fork)
	}
	tree := fx.MustRun(t, "session", "list", "--tree")
	if !strings.Contains(tree, res.Fork.ID) {
		t.Fatalf("--tree does not show the rewound fork:\n%s", tree)
	}
	// The later turns are in the fork, whole.
	if out := fx.MustRun(t, "session", "show", res.Fork.ID, "--full-history"); !strings.Contains(out, "the fix is in clock.go") {
		t.Fatalf("the fork lost a later turn:\n%s", out)
	}
	for _, args := range [][]string{
		{"session", "rewind", fx.Main.ID, "--turn", "1"},  // nothing after turn 1 now
		{"session", "rewind", fx.Fork.ID, "--turn", "0"},  // no turn 0
		{"session", "rewind", res.Fork.ID},                // no --turn, not a terminal
		{"session", "rewind", res.Fork.ID, "--turn", "3"}, // the last turn
	} {
		if r := fx.Run(t, args...); r.Code != cli.ExitUsage {
			t.Fatalf("loom %s: exit %d, want %d\n%s", strings.Join(args, " "), r.Code, cli.ExitUsage, r.Stderr)
		}
	}
	// Plain: the fork's id on stdout.
	r = fx.Run(t, "session", "rewind", res.Fork.ID, "--turn", "2")
	if r.Code != 0 || len(strings.TrimSpace(r.Stdout)) != 36 {
		t.Fatalf("rewind: %d %q %s", r.Code, r.Stdout, r.Stderr)
	}
}

// session list --branch keeps the sessions of a branch; on a terminal a
// BRANCH column shows it, piped rows keep their fields.
func TestListBranch(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	st := fx.OpenStore(t)
	b := "feature/retry"
	if _, err := st.UpdateSession(t.Context(), fx.Twin2.ID, loom.SessionUpdate{GitBranch: &b}); err != nil {
		t.Fatal(err)
	}
	if l := listIDs(t, fx, "--branch", "feature/retry"); !slices.Equal(l, []string{fx.Twin2.ID}) {
		t.Fatalf("list --branch = %v", l)
	}
	tty := fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "list")
	if !strings.Contains(tty.Stdout, "BRANCH") || !strings.Contains(tty.Stdout, "feature/retry") {
		t.Fatalf("terminal list shows no branch:\n%s", tty.Stdout)
	}
	piped := fx.MustRun(t, "session", "list")
	for _, line := range clitest.Lines(piped) {
		if n := len(strings.Split(line, "\t")); n != 7 {
			t.Fatalf("piped row has %d fields: %q", n, line)
		}
	}
}

// --name titles a new session on run and chat; with a session to resume
// it is a usage error. The git branch of the project is recorded when
// the session is made and again when it changes.
func TestNameAndBranchOfNewSessions(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	head := filepath.Join(fx.Project, ".git", "HEAD")
	if err := os.WriteFile(head, []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fx.Srv.Enqueue(openaitest.Reply{Text: "one"}, openaitest.Reply{Text: "two"}, openaitest.Reply{Text: "three"})
	r := fx.MustLoom(t, "", "run", "--name", "retry backoff", "hello")
	id := clitest.SessionOf(t, r.Stderr)
	show := func(id string) *loom.Session {
		t.Helper()
		return shownSession(t, fx, id)
	}
	if s := show(id); s.Title != "retry backoff" || s.GitBranch != "main" {
		t.Fatalf("run --name: title %q, branch %q", s.Title, s.GitBranch)
	}
	// The branch changes between turns: the session follows it.
	os.WriteFile(head, []byte("ref: refs/heads/fix/clock\n"), 0o644)
	fx.MustLoom(t, "", "run", "--resume", id, "again")
	if s := show(id); s.GitBranch != "fix/clock" {
		t.Fatalf("branch after a turn on another branch = %q", s.GitBranch)
	}
	// chat --name starts a new session with that title.
	r = fx.MustLoom(t, "third\n", "chat", "--name", "chat named")
	cid := clitest.SessionOf(t, r.Stderr)
	if s := show(cid); cid == id || s.Title != "chat named" {
		t.Fatalf("chat --name: %s %q", cid, s.Title)
	}
	for _, args := range [][]string{
		{"run", "--name", "x", "--resume", id, "hi"},
		{"chat", "--name", "x", "-c"},
		{"run", "--name", "two\nlines", "hi"},
	} {
		if r := fx.Loom(t, "", args...); r.Code != cli.ExitUsage {
			t.Fatalf("loom %q: exit %d, want %d: %s", args, r.Code, cli.ExitUsage, r.Stderr)
		}
	}
}

// /rewind in chat takes the session back and says where the later turns
// went; the conversation goes on from there.
func TestChatRewind(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Text: "a1"}, openaitest.Reply{Text: "a2"}, openaitest.Reply{Text: "a3"}, openaitest.Reply{Text: "a2 again"})
	r := fx.MustLoom(t, "q1\nq2\nq3\n/rewind 1\nq2 again\n", "chat", "--new")
	if !strings.Contains(r.Stderr, "rewound to the end of turn 1; turns 2–3 are kept in") {
		t.Fatalf("chat /rewind said:\n%s", r.Stderr)
	}
	id := clitest.SessionOf(t, r.Stderr)
	s := shownSession(t, fx, id)
	if s.TurnCount != 2 || s.LastPrompt != "q2 again" {
		t.Fatalf("after /rewind 1 and one more turn: %d turns, last prompt %q", s.TurnCount, s.LastPrompt)
	}
	// What the model saw for the new turn: turn 1, then the new prompt.
	got := fx.LastRequest(t)
	var texts []string
	for _, w := range got {
		if w.Role != "system" {
			texts = append(texts, w.Content)
		}
	}
	if strings.Join(texts, "|") != "q1|a1|q2 again" {
		t.Fatalf("the model saw %q after the rewind", texts)
	}
}

// shownSession is the session `loom session show --json` prints.
func shownSession(t *testing.T, fx *clitest.AgentFixture, id string) *loom.Session {
	t.Helper()
	return clitest.DecodeJSON[struct {
		Session  *loom.Session   `json:"session"`
		Messages []*loom.Message `json:"messages"`
	}](t, fx.MustLoom(t, "", "session", "show", id, "--json", "--limit", "1").Stdout).Session
}

// session rewind without --turn on a terminal lists the turns and asks
// which to keep, refusing an answer out of range.
func TestRewindOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	p := fx.StartTurnQuestion(t, "Keep turns up to which turn? [1-2]", "session", "rewind", fx.Main.ID[:8])
	p.Send("3\r")
	p.WaitFor(t, "Please give a number from 1 to 2.")
	p.Send("2\r")
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Output())
	}
	st := fx.OpenStore(t)
	s, err := st.Session(t.Context(), fx.Main.ID)
	if err != nil || s.TurnCount != 2 {
		t.Fatalf("after choosing turn 2: %+v, %v", s, err)
	}
}

// A session of two turns can go back to turn 1 only: rewind says so
// plainly, never "1 to 1"; one of a single turn has nothing to rewind.
func TestRewindTwoTurnsNamesTheOnlyTurn(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenStore(t)
	one := &loom.Session{UserID: "local", Key: "cli:one", Project: fx.Proj, Title: "One turn"}
	two := &loom.Session{UserID: "local", Key: "cli:two", Project: fx.Proj, Title: "Two turns"}
	ctx := context.Background()
	if err := st.Append(ctx, one, clitest.TextMsg(loom.RoleUser, "hi", clitest.Base), clitest.TextMsg(loom.RoleAssistant, "hello", clitest.Base.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(ctx, two, clitest.TextMsg(loom.RoleUser, "hi", clitest.Base), clitest.TextMsg(loom.RoleAssistant, "hello", clitest.Base.Add(time.Second)),
		clitest.TextMsg(loom.RoleUser, "again", clitest.Base.Add(time.Minute)), clitest.TextMsg(loom.RoleAssistant, "hello again", clitest.Base.Add(time.Minute+time.Second))); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"session", "rewind", "Two turns"}, "has 2 turns; --turn 1 takes it back to the end of the first"},
		{[]string{"session", "rewind", "Two turns", "--turn", "2"}, "has 2 turns; the only turn it can go back to is 1"},
		{[]string{"session", "rewind", "One turn"}, "has 1 turn; there is nothing to rewind"},
	} {
		r := fx.Exec(t, "", tc.args...)
		if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, tc.want) || strings.Contains(r.Stderr, "1 to 1") {
			t.Errorf("loom %s: exit %d, stderr %q; want %q", strings.Join(tc.args, " "), r.Code, r.Stderr, tc.want)
		}
	}
}
