package command_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/paths"
)

func TestInvocationUser(t *testing.T) {
	ios, _, _, _ := term.Test()
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, nil, "local"},
		{map[string]string{"LOOM_USER": "alice"}, nil, "alice"},
		{map[string]string{"LOOM_USER": "alice"}, []string{"--user", "bob"}, "bob"},
	} {
		inv := invocation(t, ios, tc.env, tc.args...)
		if got := inv.User(); got != tc.want {
			t.Errorf("env %v args %v: user %q, want %q", tc.env, tc.args, got, tc.want)
		}
		if flag := inv.UserFlag(); (flag != "") != (len(tc.args) > 0) {
			t.Errorf("args %v: UserFlag %q", tc.args, flag)
		}
	}
}

func TestInvocationFlags(t *testing.T) {
	ios, _, _, _ := term.Test()
	if inv := invocation(t, ios, nil); inv.JSON() || inv.NoColor() {
		t.Fatal("no flags: JSON or no colour")
	}
	if inv := invocation(t, ios, nil, "--json", "--no-color"); !inv.JSON() || !inv.NoColor() {
		t.Fatal("--json --no-color not seen")
	}
	if inv := invocation(t, ios, map[string]string{"NO_COLOR": "1"}); !inv.NoColor() {
		t.Fatal("NO_COLOR not seen")
	}
}

// newRun is a run of the command line in dir with the global flags
// args, loom's files under home, opening a SQLite store as main does.
func newRun(t *testing.T, home, dir string, args ...string) *command.Invocation {
	t.Helper()
	ios, _, _, _ := term.Test()
	inv := invocation(t, ios, map[string]string{"LOOM_HOME": home}, args...)
	inv.Getwd = func() (string, error) { return dir, nil }
	inv.OpenStore = clitest.OpenFor
	t.Cleanup(func() { inv.Close() })
	return inv
}

// A store missing at the default location reads as an empty one and is
// not created; one --db names must exist (exit 1, one line); a command
// that creates makes it, and a run opens it once.
func TestInvocationOpen(t *testing.T) {
	ctx := context.Background()
	home, dir := t.TempDir(), t.TempDir()
	inv := newRun(t, home, dir)
	st, err := inv.ReadStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := st.Sessions(ctx, loom.SessionFilter{UserID: "local"}); err != nil || len(list) != 0 {
		t.Fatalf("an empty store lists %d, %v", len(list), err)
	}
	url, _ := inv.DBURL()
	if _, err := os.Stat(url); !os.IsNotExist(err) {
		t.Fatalf("reading created the store at %s: %v", url, err)
	}
	if _, err := inv.Store(ctx); err != nil {
		t.Fatal(err)
	} else if !inv.StoreMissing() {
		t.Fatalf("opened for writing, a store that does not exist is not said to be missing")
	}
	if _, err := os.Stat(url); !os.IsNotExist(err) {
		t.Fatalf("opening for writing created the store at %s: %v", url, err)
	}

	missing := filepath.Join(dir, "typo.db")
	_, err = newRun(t, home, dir, "--db", missing).ReadStore(ctx)
	if err == nil || command.ExitCode(err) != command.ExitError || !strings.Contains(err.Error(), missing) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a --db that does not exist: %v (exit %d)", err, command.ExitCode(err))
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("a mistyped --db was created: %v", err)
	}

	created, err := inv.CreateStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(url); err != nil {
		t.Fatalf("CreateStore made no store at %s: %v", url, err)
	}
	if again, err := inv.Store(ctx); err != nil || again != created {
		t.Fatalf("a second open in one run opened another handle: %v", err)
	}
	if again, err := inv.ReadStore(ctx); err != nil || again != created {
		t.Fatalf("reading after writing opened another handle: %v", err)
	}
}

// cloneOf makes a work tree at dir whose repository's remote is remote.
func cloneOf(t *testing.T, dir, remote string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = " + remote + "\n"
	if err := os.WriteFile(filepath.Join(dir, ".git", "config"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// Opening the store in a clone moves the sessions recorded under the
// clone's path to its repository's project; when they cannot move, the
// command goes on with one line of warning, and none of them moved.
func TestInvocationOpenAdoptsTheProject(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	root := cloneOf(t, filepath.Join(t.TempDir(), "api-old"), "git@github.com:acme/api.git")
	byPath := loom.Project{ID: paths.ProjectID(root), Name: "api-old", Root: root}
	repo := loom.Project{ID: paths.ProjectID("github.com/acme/api"), Name: "api", Root: root}
	if p, err := paths.DetectProject(root); err != nil || p != repo {
		t.Fatalf("the clone's project is %+v, %v; want %+v", p, err, repo)
	}

	inv := newRun(t, home, root)
	st, err := inv.CreateStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	old := addSession(t, st, &loom.Session{Key: "cli:api-old", Project: byPath}, "hi")
	hook := addSession(t, st, &loom.Session{Key: "http:hook", Project: byPath}, "hi")
	blocker := addSession(t, st, &loom.Session{Key: "http:hook", Project: loom.Project{ID: repo.ID, Name: "api", Root: "/elsewhere/api"}}, "hi")
	inv.Close()

	inv = newRun(t, home, root)
	st, err = inv.ReadStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	warning := inv.IO.ErrOut.(interface{ String() string }).String()
	want := "loom: warning: the sessions of " + root + " could not move to the project of its repository: move " + hook.ID + ": another session already has that key in that project\n"
	if warning != want {
		t.Fatalf("stderr %q, want %q", warning, want)
	}
	for _, s := range []*loom.Session{old, hook} {
		if got, _ := st.Session(ctx, s.ID); got.Project != byPath {
			t.Fatalf("a failed adoption moved %s to %+v", s.Key, got.Project)
		}
	}
	other := "http:other"
	if _, err := st.UpdateSession(ctx, blocker.ID, loom.SessionUpdate{Key: &other}); err != nil {
		t.Fatal(err)
	}
	inv.Close()

	inv = newRun(t, home, root)
	if st, err = inv.ReadStore(ctx); err != nil {
		t.Fatal(err)
	}
	if warning := inv.IO.ErrOut.(interface{ String() string }).String(); warning != "" {
		t.Fatalf("stderr %q", warning)
	}
	for s, key := range map[*loom.Session]string{old: "cli:api", hook: "http:hook"} {
		if got, _ := st.Session(ctx, s.ID); got.Project != repo || got.Key != key {
			t.Fatalf("%s after the adoption: %+v %q, want %+v %q", s.Key, got.Project, got.Key, repo, key)
		}
	}
}
