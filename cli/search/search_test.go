package search

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/semantic"
)

// world is a SQLite store with a session in the project api and one in
// web, both about a pool that times out.
type world struct {
	st         loom.Engine
	api, web   loom.Project
	apiS, webS *loom.Session
}

func newWorld(t *testing.T) *world {
	t.Helper()
	st := cmdtest.Store(t)
	w := &world{st: st, api: loom.Project{ID: "p-api", Name: "api", Root: "/src/api"}, web: loom.Project{ID: "p-web", Name: "web", Root: "/src/web"}}
	w.apiS = &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:api", Title: "api pool", Project: w.api}
	storetest.AppendTexts(t, st, w.apiS, "why does the connection pool time out", "the idle timeout is 30 seconds")
	w.webS = &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:web", Title: "web pool", Project: w.web}
	storetest.AppendTexts(t, st, w.webS, "the web pool times out too", "raised the web pool's timeout", "and the flaky deploy")
	return w
}

// options are loom search's options for query in project p of w, and
// its streams.
func (w *world) options(p loom.Project, query string) (*Options, *term.IOStreams) {
	ios, _, _, _ := term.Test()
	scope := command.Scope{IO: ios, User: func() string { return "local" }, Project: func() (loom.Project, error) { return p, nil }}
	return &Options{
		IO:           ios,
		ReadStore:    func(context.Context) (loom.Engine, error) { return w.st, nil },
		Resolve:      scope.Resolve,
		ScopeProject: scope.ScopeProject,
		RefLen:       scope.RefLen,
		Now:          time.Now,
		Searcher:     func(_ context.Context, st loom.Engine) *semantic.Searcher { return &semantic.Searcher{Store: st} },
		User:         "local",
		Query:        query,
		Limit:        20,
	}, ios
}

func text(w any) string { return w.(interface{ String() string }).String() }

// search runs opts and returns the sessions of its hits, as the lines
// off a terminal name them, and its stderr.
func search(t *testing.T, opts *Options, ios *term.IOStreams) (sessions []string, stderr string) {
	t.Helper()
	if err := searchRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(text(ios.Out)) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) != 6 {
			t.Fatalf("a hit's line %q has %d fields, want 6", line, len(f))
		}
		sessions = append(sessions, f[0])
	}
	return sessions, text(ios.ErrOut)
}

// The command fills its options from its flags and arguments, and
// refuses flags that cannot go together.
func TestNewCmdSearchOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, NewCmdSearch, "flaky", "test", "-a", "--role", "assistant", "-L", "5", "--session", "0196a3b2",
		"--exact", "--archived", "--surface", "cli", "--raw", "--keyword", "--json")
	if got.Query != "flaky test" || !got.AllProjects || got.Role != "assistant" || got.Limit != 5 || got.SessionRef != "0196a3b2" ||
		!got.Exact || !got.Archived || got.Surface != "cli" || !got.Raw || !got.Keyword || got.Semantic || !got.JSON || got.User != "local" {
		t.Errorf("options: %+v", got)
	}
	if got := cmdtest.Options(t, NewCmdSearch, "deploy", "--semantic", "-p"); got.Limit != 20 || !got.Semantic || !got.Project || got.AllProjects || got.Searcher == nil {
		t.Errorf("defaults: %+v", got)
	}
	for _, bad := range [][]string{
		{},
		{" "},
		{"x", "-p", "-a"},
		{"x", "--role", "robot"},
		{"x", "--semantic", "--keyword"},
		{"x", "--semantic", "--raw"},
		{"x", "--semantic", "--exact"},
		{"x", "--limit", "0"},
	} {
		cmdtest.Rejects(t, NewCmdSearch, bad...)
	}
}

// Search keeps to this project by default, to every project with -a,
// and to one session with --session.
func TestSearchRunKeepsToItsScope(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	opts, ios := w.options(w.api, "pool")
	if got, _ := search(t, opts, ios); len(got) != 1 || got[0] != w.apiS.ID {
		t.Errorf("in api: %q, want only %s", got, w.apiS.ID)
	}
	opts, ios = w.options(w.api, "pool")
	opts.AllProjects = true
	if got, _ := search(t, opts, ios); len(got) != 3 {
		t.Errorf("-a: %q, want the three messages about the pool", got)
	}
	opts, ios = w.options(w.api, "pool")
	opts.SessionRef, opts.Role = w.webS.ID, loom.RoleAssistant
	if got, _ := search(t, opts, ios); len(got) != 1 || got[0] != w.webS.ID {
		t.Errorf("--session web --role assistant: %q, want web's one reply", got)
	}

	opts, ios = w.options(w.web, "pool")
	opts.JSON, opts.Limit = true, 1
	if err := searchRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	var hits []loom.SearchHit
	if err := json.Unmarshal([]byte(text(ios.Out)), &hits); err != nil || len(hits) != 1 || hits[0].SessionID != w.webS.ID || hits[0].SessionTitle != "web pool" {
		t.Errorf("--json -L 1 in web: %s (%v)", text(ios.Out), err)
	}
}

// A search that finds nothing here but would elsewhere says how to
// search there; on stderr, so that --json still prints [].
func TestSearchRunPointsToOtherProjects(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	opts, ios := w.options(w.api, "flaky deploy")
	opts.JSON = true
	if err := searchRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if text(ios.Out) != "[]\n" {
		t.Errorf("--json: %q, want []", text(ios.Out))
	}
	if want := `No messages match "flaky deploy" in project api (/src/api); loom search -a 'flaky deploy' searches every project.` + "\n"; text(ios.ErrOut) != want {
		t.Errorf("stderr %q, want %q", text(ios.ErrOut), want)
	}

	opts, ios = w.options(w.api, "nowhere")
	ios.SetStdoutTTY(true)
	if got, stderr := search(t, opts, ios); len(got) != 0 || stderr != `No messages match "nowhere".`+"\n" {
		t.Errorf("on a terminal, nothing anywhere: %q, stderr %q", got, stderr)
	}
}
