package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/paths"
)

func TestSessionMove(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	// Move the web session into the api project from a subdirectory:
	// its cli:web key follows the project's name.
	r := fx.runWith(t, runOpts{dir: filepath.Join(fx.project, "pkg")}, "session", "move", "Deploy notes", "--json")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	s := decodeJSON[*loom.Session](t, r.stdout)
	if s.Project != fx.proj || s.Key != "cli:api" && !strings.HasPrefix(s.Key, "cli:api:") || s.Cwd != filepath.Join(fx.project, "pkg") {
		t.Fatalf("moved = project %+v key %q cwd %q", s.Project, s.Key, s.Cwd)
	}
	// api already had cli:api, so the moved one got a key of its own.
	if s.Key == "cli:api" {
		t.Fatalf("two sessions share cli:api in one project")
	}
	if out := fx.mustRun(t, "session", "list"); !strings.Contains(out, fx.web.ID) {
		t.Fatalf("moved session not listed in its new project:\n%s", out)
	}
	// And back, naming the directory.
	s = decodeJSON[*loom.Session](t, fx.mustRun(t, "session", "move", fx.web.ID, fx.other, "--json"))
	if s.Project != fx.otherP || s.Key != "cli:web"+strings.TrimPrefix(s.Key, "cli:web") || !strings.HasPrefix(s.Key, "cli:web") {
		t.Fatalf("moved back = %+v %q", s.Project, s.Key)
	}
}

// A project that moved on disk: list and chat in the new place find no
// sessions, say where the old ones are and how to bring them here, and
// move --from brings them all in one step.
func TestMovedProject(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	moved := filepath.Join(fx.home, "elsewhere", "api")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fx.project, moved); err != nil {
		t.Fatal(err)
	}
	old := fx.proj.Root
	hint := "5 sessions of api belong to " + old + ", which no longer exists; move them here with: loom session move --from " + old
	here := runOpts{dir: moved}
	r := fx.runWith(t, here, "session", "list")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, hint) {
		t.Fatalf("list in the moved project: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = fx.runWith(t, runOpts{dir: moved, stdin: "hello\n", env: map[string]string{"OLLAMA_HOST": "127.0.0.1:9"}}, "chat")
	if !strings.Contains(r.stderr, hint) {
		t.Fatalf("chat in the moved project does not say where its sessions are:\n%s", r.stderr)
	}
	// An unrelated project of the same name that still exists is not
	// offered, nor is anything in a project that has sessions.
	if r := fx.runWith(t, runOpts{dir: fx.other}, "session", "list"); strings.Contains(r.stderr, "no longer exists") {
		t.Fatalf("hint in a project with sessions: %s", r.stderr)
	}

	r = fx.runWith(t, here, "session", "move", "--from", old, "--json")
	if r.code != 0 {
		t.Fatalf("move --from: exit %d: %s", r.code, r.stderr)
	}
	got := decodeJSON[[]*loom.Session](t, r.stdout)
	if len(got) != 5 {
		t.Fatalf("moved %d sessions, want 5 (main, its fork and sub-agent, two twins)", len(got))
	}
	list := decodeJSON[[]*loom.Session](t, fx.runWith(t, here, "session", "list", "--json").stdout)
	if len(list) != 5 {
		t.Fatalf("the new place lists %d sessions", len(list))
	}
	for _, s := range list {
		if s.Project.Root != moved || s.Project.ID != paths.ProjectID(moved) {
			t.Fatalf("session %s still in %+v", s.ID, s.Project)
		}
	}
	if r := fx.runWith(t, here, "session", "list"); strings.Contains(r.stderr, "no longer exists") {
		t.Fatalf("hint after the move: %s", r.stderr)
	}
	if r := fx.runWith(t, here, "session", "move", "--from", old); r.code != ExitNotFound {
		t.Fatalf("second move --from: exit %d: %s", r.code, r.stderr)
	}
	if r := fx.runWith(t, here, "session", "move"); r.code != ExitUsage {
		t.Fatalf("move without REF or --from: exit %d", r.code)
	}
}
