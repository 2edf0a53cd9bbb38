package session

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/sqlite"
)

// world is what the run functions of the session commands work on in
// their tests: a SQLite store in a temporary directory, and two
// projects there (git work trees), api, the working directory's, and
// web.
type world struct {
	root     string
	st       loom.Engine
	api, web loom.Project
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{root: t.TempDir()}
	for _, p := range []*loom.Project{&w.api, &w.web} {
		name := "api"
		if p == &w.web {
			name = "web"
		}
		dir := filepath.Join(w.root, name)
		if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if *p, err = paths.DetectProject(dir); err != nil {
			t.Fatal(err)
		}
	}
	st, err := sqlite.Open(t.Context(), filepath.Join(w.root, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w.st = st
	return w
}

// open is w's store, as the invocation opens it for any access.
func (w *world) open(context.Context) (loom.Engine, error) { return w.st, nil }

// scope is user local's, in project api.
func (w *world) scope(ios *term.IOStreams) command.Scope {
	return command.Scope{IO: ios, User: func() string { return "local" },
		Project: func() (loom.Project, error) { return w.api, nil }}
}

// openSession opens w's store and finds the session ref names, as the
// invocation's StoreSession and ReadSession do.
func (w *world) openSession(ios *term.IOStreams) func(ctx context.Context, ref string) (loom.Engine, *loom.Session, error) {
	return func(ctx context.Context, ref string) (loom.Engine, *loom.Session, error) {
		s, err := w.scope(ios).Resolve(ctx, w.st, ref)
		return w.st, s, err
	}
}

// session adds user local's session titled title, keyed key, in project
// p to w's store with texts as its messages (the user's and the
// assistant's in turn), and returns it as stored.
func (w *world) session(t *testing.T, p loom.Project, key, title string, texts ...string) *loom.Session {
	t.Helper()
	s := &loom.Session{ID: loom.NewID(), UserID: "local", Key: key, Title: title, Project: p}
	storetest.AppendTexts(t, w.st, s, texts...)
	return w.stored(t, s.ID)
}

// poolTimeout adds the session most tests work on: "pool timeout", keyed
// cli:api, in project api, of one turn and the later turns' prompts and
// replies given (laterTurns: two more).
func (w *world) poolTimeout(t *testing.T, later ...string) *loom.Session {
	t.Helper()
	return w.session(t, w.api, "cli:api", "pool timeout", append([]string{"why does the pool time out", "the idle timeout"}, later...)...)
}

// laterTurns are the prompts and replies of turns 2 and 3.
var laterTurns = []string{"raise it to 60", "raised", "and the tests?", "they pass"}

// oldSpike adds another session of project api: "old spike", keyed
// cli:api:2, of one turn.
func (w *world) oldSpike(t *testing.T) *loom.Session {
	t.Helper()
	return w.session(t, w.api, "cli:api:2", "old spike", "try a spike", "spiked")
}

// stored is session id as w's store holds it now.
func (w *world) stored(t *testing.T, id string) *loom.Session {
	t.Helper()
	s, err := w.st.Session(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// terminal are streams on buffers that say they are a terminal, without
// colour.
func terminal() *term.IOStreams {
	ios, _, _, _ := term.Test()
	ios.SetStdoutTTY(true)
	ios.SetStderrTTY(true)
	ios.SetColorEnabled(false)
	return ios
}

// piped are streams on buffers, none a terminal.
func piped() *term.IOStreams {
	ios, _, _, _ := term.Test()
	return ios
}

// printedJSON is what was printed on ios's stdout, JSON of a T.
func printedJSON[T any](t *testing.T, ios *term.IOStreams) T {
	t.Helper()
	out, _ := outputs(ios)
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("stdout is not JSON of a %T: %v\n%s", v, err, out)
	}
	return v
}

// refused checks that err is a usage error (exit status 2) that says
// want.
func refused(t *testing.T, err error, want string) {
	t.Helper()
	var ue *command.UsageError
	if !errors.As(err, &ue) || !strings.Contains(ue.Msg, want) {
		t.Errorf("error %v, want a usage error saying %q", err, want)
	}
}

// Every session command is in the group, each once.
func TestNewCmdSessionHasEveryCommand(t *testing.T) {
	t.Parallel()
	inv := command.NewInvocation(&command.Factory{IO: piped(), Env: func(string) string { return "" }})
	var got []string
	for _, c := range NewCmdSession(inv).Commands() {
		got = append(got, c.Name())
	}
	want := "archive delete export fork handoff import list move prune reimport rename restore restore-to resume rewind show summarize unarchive"
	if strings.Join(got, " ") != want {
		t.Errorf("commands %v, want %s", got, want)
	}
}
