package session

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// moveOptions are loom session move's options on w, with w's root as
// the working directory.
func (w *world) moveOptions(ios *term.IOStreams) *MoveOptions {
	sc := w.scope(ios)
	return &MoveOptions{
		StoredSessions: StoredSessions{IO: ios, Store: w.open, Resolve: sc.Resolve, DisplayID: sc.DisplayID},
		AbsPath:        func(dir string) (string, error) { return filepath.Join(w.root, dir), nil },
		Now:            time.Now,
		User:           "local",
	}
}

// Move re-homes a session to the project of the directory given,
// renaming a key made from the old project's name; --from moves every
// session of a project, trashed ones too.
func TestSessionMoveRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.poolTimeout(t)
	b := w.session(t, w.api, "cli:api:2", "retry backoff", "retry with backoff", "done")
	c := w.session(t, w.api, "cli:api:3", "old spike", "try a spike", "spiked")
	if _, err := w.st.Delete(t.Context(), c.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	ios := terminal()
	opts := w.moveOptions(ios)
	opts.Ref, opts.Dir = "pool timeout", "web"
	if err := moveRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ := outputs(ios)
	if want := " to web (" + w.web.Root + "); its key is now cli:web\n"; !strings.HasPrefix(out, "✓ Moved ") || !strings.HasSuffix(out, want) {
		t.Errorf("move: %q, want ✓ Moved …%s", out, want)
	}
	if got := w.stored(t, a.ID); got.Project.ID != w.web.ID || got.Key != "cli:web" {
		t.Errorf("moved: project %s, key %s; want %s, cli:web", got.Project.Name, got.Key, w.web.Name)
	}

	ios = piped()
	opts = w.moveOptions(ios)
	opts.From, opts.Dir, opts.JSON = "api", "web", true
	if err := moveRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if moved := printedJSON[[]*loom.Session](t, ios); len(moved) != 2 {
		t.Errorf("--from --json: %d sessions, want 2", len(moved))
	}
	for _, s := range []*loom.Session{b, c} {
		if got := w.stored(t, s.ID); got.Project.ID != w.web.ID || !strings.HasPrefix(got.Key, "cli:web") {
			t.Errorf("--from api: %s is in %s, key %s", s.ID, got.Project.Name, got.Key)
		}
	}

	opts = w.moveOptions(piped())
	opts.From = "api"
	if err := moveRun(t.Context(), opts); loom.ErrorCode(err) != loom.ENOTFOUND || !strings.Contains(err.Error(), "no sessions belong to a project rooted at") {
		t.Errorf("--from a project with no sessions left: %v", err)
	}
}

// The command takes a reference and a directory, or --from and a
// directory, and refuses a count of arguments that fits neither.
func TestNewCmdSessionMoveOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdSessionMove, "flaky test", "../api")
	if got.Ref != "flaky test" || got.Dir != "../api" || got.From != "" || got.AbsPath == nil {
		t.Errorf("options: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdSessionMove, "--from", "../old/api"); got.From != "../old/api" || got.Ref != "" || got.Dir != "" {
		t.Errorf("--from: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdSessionMove, "--from", "old", "new"); got.From != "old" || got.Dir != "new" {
		t.Errorf("--from OLD DIR: %+v", got)
	}
	refused(t, cmdtest.Rejects(t, newCmdSessionMove), "missing arguments")
	refused(t, cmdtest.Rejects(t, newCmdSessionMove, "a", "b", "c"), "too many arguments")
	refused(t, cmdtest.Rejects(t, newCmdSessionMove, "--from", "old", "a", "b"), "too many arguments")
}
