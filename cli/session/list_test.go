package session

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// listOptions are loom session list's options on w, listing project p,
// and its streams.
func (w *world) listOptions(ios *term.IOStreams, p loom.Project) *ListOptions {
	sc := w.scope(ios)
	return &ListOptions{
		IO:        ios,
		ReadStore: w.open,
		ScopeProject: func(all bool) *loom.Project {
			if all {
				return nil
			}
			return &p
		},
		PrintMovedProjectHint: func(ctx context.Context, st loom.Store, project loom.Project) error { return nil },
		RefLen:                sc.RefLen,
		Now:                   time.Now,
		User:                  "local",
		Limit:                 20,
	}
}

// listed runs list with opts as --json and returns the ids it listed,
// sorted.
func listed(t *testing.T, opts *ListOptions) []string {
	t.Helper()
	ios := piped()
	opts.IO, opts.JSON = ios, true
	if err := listRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	return sortedIDs(printedJSON[[]*loom.Session](t, ios)...)
}

func sortedIDs(ss ...*loom.Session) []string {
	ids := []string{}
	for _, s := range ss {
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	return ids
}

// List keeps to the project unless --all-projects, leaves archived and
// deleted sessions out, and lists them alone with --archived and
// --deleted.
func TestSessionListRunFilters(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a1 := w.poolTimeout(t)
	a2 := w.session(t, w.api, "cli:api:2", "retry backoff", "retry with backoff", "done")
	a3 := w.session(t, w.api, "cli:api:3", "old spike", "try a spike", "spiked")
	w1 := w.session(t, w.web, "cli:web", "web pool", "the web pool too", "fixed")
	w2 := w.session(t, w.web, "cli:web:2", "web cache", "cache the pages", "cached")
	archived := true
	if _, err := w.st.UpdateSession(t.Context(), a3.ID, loom.SessionUpdate{Archived: &archived}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.Delete(t.Context(), w1.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		set  func(*ListOptions)
		want []string
	}{
		{"this project", func(*ListOptions) {}, sortedIDs(a1, a2)},
		{"--all-projects", func(o *ListOptions) { o.AllProjects = true }, sortedIDs(a1, a2, w2)},
		{"--archived", func(o *ListOptions) { o.Archived = true }, sortedIDs(a3)},
		{"--deleted -a", func(o *ListOptions) { o.Deleted, o.AllProjects = true, true }, sortedIDs(w1)},
		{"--limit 1", func(o *ListOptions) { o.Limit = 1 }, nil},
	} {
		opts := w.listOptions(piped(), w.api)
		c.set(opts)
		got := listed(t, opts)
		if c.want == nil {
			if len(got) != 1 {
				t.Errorf("%s: listed %v, want one session", c.name, got)
			}
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: listed %v, want %v", c.name, got, c.want)
		}
	}
}

// Piped, a row is the session's fields tab-separated, its id whole; on
// a terminal, ids are cut to what tells them apart, and a list the limit
// cut says how many more there are. --tree puts a fork under its
// session.
func TestSessionListRunRows(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a1 := w.poolTimeout(t)
	a2 := w.session(t, w.api, "cli:api:2", "retry backoff", "retry with backoff", "done")

	ios := piped()
	if err := listRun(t.Context(), w.listOptions(ios, w.api)); err != nil {
		t.Fatal(err)
	}
	out, _ := outputs(ios)
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(rows) != 2 {
		t.Fatalf("piped list:\n%s\nwant 2 rows", out)
	}
	for _, s := range []*loom.Session{a1, a2} {
		if !strings.Contains(out, s.ID+"\t"+s.Title+"\t"+s.Key+"\t") {
			t.Errorf("piped list:\n%s\nwant a row %s<TAB>%s<TAB>%s…", out, s.ID, s.Title, s.Key)
		}
	}

	ios = terminal()
	opts := w.listOptions(ios, w.api)
	opts.Limit = 1
	if err := listRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ = outputs(ios)
	if !strings.HasPrefix(out, "ID ") || strings.Contains(out, a1.ID) || strings.Contains(out, a2.ID) || !strings.Contains(out, "1 more") {
		t.Errorf("terminal list with --limit 1:\n%s\nwant a header, shortened ids and 1 more", out)
	}

	fork, err := w.st.Fork(t.Context(), a1.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ios = piped()
	opts = w.listOptions(ios, w.api)
	opts.Tree = true
	if err := listRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ = outputs(ios)
	if !strings.Contains(out, a1.ID+"\tpool timeout\t") || !strings.Contains(out, fork.ID+"\t└ fork: pool timeout\t") ||
		strings.Index(out, fork.ID) < strings.Index(out, a1.ID) {
		t.Errorf("--tree:\n%s\nwant the fork under its session", out)
	}
}

// An empty project whose user has sessions elsewhere says where they
// are, on stderr; --json still prints [].
func TestSessionListRunEmptyProject(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.poolTimeout(t)
	ios := terminal()
	opts := w.listOptions(ios, w.web)
	opts.JSON = true
	if err := listRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, errOut := outputs(ios)
	if out != "[]\n" {
		t.Errorf("--json of an empty project: %q, want []", out)
	}
	if want := "No sessions in project web (" + w.web.Root + "); loom session list -a lists every project's.\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
}

// The command fills its options from its flags, and refuses --deleted
// with --archived or --tree, a negative --limit and arguments.
func TestNewCmdSessionListOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdSessionList, "-a", "--surface", "telegram", "--branch", "main", "--tree", "-L", "5")
	if !got.AllProjects || got.Surface != "telegram" || got.Branch != "main" || !got.Tree || got.Limit != 5 ||
		got.Archived || got.Deleted || got.User != "local" || got.JSON || got.ReadStore == nil || got.RefLen == nil {
		t.Errorf("options: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdSessionList, "--deleted"); !got.Deleted || got.Limit != 20 || got.AllProjects {
		t.Errorf("--deleted: %+v", got)
	}
	refused(t, cmdtest.Rejects(t, newCmdSessionList, "--deleted", "--archived"), "--deleted lists the whole trash")
	refused(t, cmdtest.Rejects(t, newCmdSessionList, "--deleted", "--tree"), "--deleted lists the whole trash")
	refused(t, cmdtest.Rejects(t, newCmdSessionList, "--limit", "-1"), "--limit must be 0")
	refused(t, cmdtest.Rejects(t, newCmdSessionList, "pool"), "takes no arguments")
}

// On a terminal the list puts a sub-agent's session under the session
// that ran it, as --tree draws it, wherever its time would put it;
// piped and --json rows keep the newest-first order. --tree leaves
// archived sessions out unless --archived, as the list does.
func TestSessionListNestsSubagents(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	at := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	msg := func(role, text string, min int) *loom.Message {
		return &loom.Message{Role: role, CreatedAt: at.Add(time.Duration(min) * time.Minute), Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
	}
	add := func(s *loom.Session, msgs ...*loom.Message) *loom.Session {
		if s.ID == "" {
			s.ID = loom.NewID()
		}
		s.UserID, s.Project = "local", w.api
		if err := w.st.Append(t.Context(), s, msgs...); err != nil {
			t.Fatal(err)
		}
		return w.stored(t, s.ID)
	}
	main := add(&loom.Session{Key: "cli:api", Title: "pool timeout"}, msg(loom.RoleUser, "why does the pool time out", 0))
	sub := add(&loom.Session{Kind: loom.KindSubagent, ParentID: main.ID, Title: "explore the pool"}, msg(loom.RoleUser, "list the pool's files", 1))
	other := add(&loom.Session{Key: "cli:api:2", Title: "retry backoff"}, msg(loom.RoleUser, "retry with backoff", 2))
	add(main, msg(loom.RoleAssistant, "the idle timeout", 3))

	ios := terminal()
	ios.SetWidth(120)
	if err := listRun(t.Context(), w.listOptions(ios, w.api)); err != nil {
		t.Fatal(err)
	}
	out, _ := outputs(ios)
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	short := func(s *loom.Session) string { return s.ID[:8] }
	if len(rows) != 4 || !strings.HasPrefix(rows[1], short(main)) || !strings.HasPrefix(rows[2], short(sub)) || !strings.Contains(rows[2], "└ sub-agent: explore the pool") ||
		!strings.HasPrefix(rows[3], short(other)) {
		t.Errorf("terminal list:\n%s\nwant the sub-agent's session under its parent", out)
	}
	ios = piped()
	if err := listRun(t.Context(), w.listOptions(ios, w.api)); err != nil {
		t.Fatal(err)
	}
	out, _ = outputs(ios)
	if i, j, k := strings.Index(out, main.ID), strings.Index(out, other.ID), strings.Index(out, sub.ID); !(i < j && j < k) {
		t.Errorf("piped list:\n%s\nwant newest first", out)
	}

	archived := true
	if _, err := w.st.UpdateSession(t.Context(), sub.ID, loom.SessionUpdate{Archived: &archived}); err != nil {
		t.Fatal(err)
	}
	ios = piped()
	opts := w.listOptions(ios, w.api)
	opts.Tree = true
	if err := listRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if out, _ := outputs(ios); strings.Contains(out, sub.ID) || !strings.Contains(out, main.ID) {
		t.Errorf("--tree:\n%s\nwant the archived sub-agent's session left out", out)
	}
	ios = piped()
	opts = w.listOptions(ios, w.api)
	opts.Tree, opts.Archived = true, true
	if err := listRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if out, _ := outputs(ios); !strings.Contains(out, sub.ID) {
		t.Errorf("--tree --archived:\n%s\nwant the archived session", out)
	}
}
