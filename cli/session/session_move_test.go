package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/paths"
)

func TestSessionMove(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	// Move the web session into the api project from a subdirectory:
	// its cli:web key follows the project's name.
	r := fx.RunWith(t, clitest.RunOpts{Dir: filepath.Join(fx.Project, "pkg")}, "session", "move", "Deploy notes", "--json")
	if r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	s := clitest.DecodeJSON[*loom.Session](t, r.Stdout)
	if s.Project != fx.Proj || s.Key != "cli:api" && !strings.HasPrefix(s.Key, "cli:api:") || s.Cwd != filepath.Join(fx.Project, "pkg") {
		t.Fatalf("moved = project %+v key %q cwd %q", s.Project, s.Key, s.Cwd)
	}
	// api already had cli:api, so the moved one got a key of its own.
	if s.Key == "cli:api" {
		t.Fatalf("two sessions share cli:api in one project")
	}
	if out := fx.MustRun(t, "session", "list"); !strings.Contains(out, fx.Web.ID) {
		t.Fatalf("moved session not listed in its new project:\n%s", out)
	}
	// And back, naming the directory.
	s = clitest.DecodeJSON[*loom.Session](t, fx.MustRun(t, "session", "move", fx.Web.ID, fx.Other, "--json"))
	if s.Project != fx.OtherP || s.Key != "cli:web"+strings.TrimPrefix(s.Key, "cli:web") || !strings.HasPrefix(s.Key, "cli:web") {
		t.Fatalf("moved back = %+v %q", s.Project, s.Key)
	}
}

// A project that moved on disk: list and chat in the new place find no
// sessions, say where the old ones are and how to bring them here, and
// move --from brings them all in one step.
func TestMovedProject(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	moved := filepath.Join(fx.Home, "elsewhere", "api")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fx.Project, moved); err != nil {
		t.Fatal(err)
	}
	old := fx.Proj.Root
	hint := "5 sessions of api belong to " + old + ", which no longer exists; move them here with: loom session move --from " + old
	here := clitest.RunOpts{Dir: moved}
	r := fx.RunWith(t, here, "session", "list")
	if r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, hint) {
		t.Fatalf("list in the moved project: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	r = fx.RunWith(t, clitest.RunOpts{Dir: moved, Stdin: "hello\n", Env: map[string]string{"OLLAMA_HOST": "127.0.0.1:9"}}, "chat")
	if !strings.Contains(r.Stderr, hint) {
		t.Fatalf("chat in the moved project does not say where its sessions are:\n%s", r.Stderr)
	}
	// An unrelated project of the same name that still exists is not
	// offered, nor is anything in a project that has sessions.
	if r := fx.RunWith(t, clitest.RunOpts{Dir: fx.Other}, "session", "list"); strings.Contains(r.Stderr, "no longer exists") {
		t.Fatalf("hint in a project with sessions: %s", r.Stderr)
	}

	r = fx.RunWith(t, here, "session", "move", "--from", old, "--json")
	if r.Code != 0 {
		t.Fatalf("move --from: exit %d: %s", r.Code, r.Stderr)
	}
	got := clitest.DecodeJSON[[]*loom.Session](t, r.Stdout)
	if len(got) != 5 {
		t.Fatalf("moved %d sessions, want 5 (main, its fork and sub-agent, two twins)", len(got))
	}
	list := clitest.DecodeJSON[[]*loom.Session](t, fx.RunWith(t, here, "session", "list", "--json").Stdout)
	if len(list) != 5 {
		t.Fatalf("the new place lists %d sessions", len(list))
	}
	for _, s := range list {
		if s.Project.Root != moved || s.Project.ID != paths.ProjectID(moved) {
			t.Fatalf("session %s still in %+v", s.ID, s.Project)
		}
	}
	if r := fx.RunWith(t, here, "session", "list"); strings.Contains(r.Stderr, "no longer exists") {
		t.Fatalf("hint after the move: %s", r.Stderr)
	}
	if r := fx.RunWith(t, here, "session", "move", "--from", old); r.Code != cli.ExitNotFound {
		t.Fatalf("second move --from: exit %d: %s", r.Code, r.Stderr)
	}
	if r := fx.RunWith(t, here, "session", "move"); r.Code != cli.ExitUsage {
		t.Fatalf("move without REF or --from: exit %d", r.Code)
	}
}
