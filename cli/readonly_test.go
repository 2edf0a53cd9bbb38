package cli_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/fsfault"
	"github.com/loomhq/loom/openai/openaitest"
)

// A --db (or $LOOM_DB) that names no store is an error, one line, exit
// 1, for every command but those that write a first message; nothing is
// created. On a fresh machine (no --db, nothing in the data directory)
// reading commands find no sessions and create nothing either.
func TestBinaryMissingStore(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "sessions.db")
	for _, args := range [][]string{
		{"session", "list"}, {"session", "show", fx.Main.ID}, {"search", "flaky"}, {"session", "export", fx.Main.ID},
		{"usage"}, {"session", "rename", fx.Main.ID, "x"}, {"session", "delete", fx.Main.ID, "--yes"},
		{"session", "prune", "--older-than", "1d", "--yes"}, {"session", "fork", fx.Main.ID, "--turn", "1"},
	} {
		r := fx.Exec(t, "", append([]string{"--db", missing}, args...)...)
		want := fmt.Sprintf("loom: no store at %s (directory %s does not exist)\n", missing, filepath.Dir(missing))
		if r.Code != cli.ExitError || r.Stderr != want {
			t.Errorf("loom --db MISSING %s: exit %d, stderr %q; want 1 and %q", strings.Join(args, " "), r.Code, r.Stderr, want)
		}
		r = fx.Exec(t, "", append([]string{"--db", filepath.Join(dir, "sesions.db")}, args...)...)
		if r.Code != cli.ExitError || r.Stderr != "loom: no store at "+filepath.Join(dir, "sesions.db")+"\n" {
			t.Errorf("loom --db TYPO %s: exit %d, stderr %q", strings.Join(args, " "), r.Code, r.Stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("commands on a missing store created %v", entries)
	}

	// A fresh machine: nothing under LOOM_HOME yet, no --db.
	fresh := t.TempDir()
	run := func(args ...string) clitest.Result {
		cmd := exec.Command(clitest.LoomBinary(t), args...)
		cmd.Dir = fx.Project
		cmd.Env = []string{"LOOM_HOME=" + fresh, "HOME=" + fresh, "PATH=" + os.Getenv("PATH")}
		return clitest.ExecCmd(t, cmd, "")
	}
	if r := run("session", "list", "--json"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "[]" || r.Stderr != "" {
		t.Fatalf("list on a fresh machine: %+v", r)
	}
	if r := run("search", "anything"); r.Code != 0 || r.Stderr != "" {
		t.Fatalf("search on a fresh machine: %+v", r)
	}
	if r := run("session", "show", "abcd"); r.Code != cli.ExitNotFound || r.Stderr != "loom: no session matches \"abcd\"\n" {
		t.Fatalf("show on a fresh machine: %+v", r)
	}
	if r := run("session", "delete", "abcd", "--yes"); r.Code != cli.ExitNotFound {
		t.Fatalf("delete on a fresh machine: %+v", r)
	}
	if entries, _ := os.ReadDir(fresh); len(entries) != 0 {
		t.Fatalf("reading on a fresh machine created %v", entries)
	}
}

// The commands that write a first message create a missing store, with
// its directory.
func TestBinaryRunCreatesStore(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Text: "hello from a new store"})
	db := filepath.Join(t.TempDir(), "new", "dir", "sessions.db")
	r := fx.MustLoom(t, "", "--db", db, "run", "hello")
	if !strings.Contains(r.Stdout, "hello from a new store") {
		t.Fatalf("run = %+v", r)
	}
	if list := fx.MustLoom(t, "", "--db", db, "session", "list"); len(clitest.Lines(list.Stdout)) != 1 {
		t.Fatalf("list of the new store:\n%s", list.Stdout)
	}
}

// Reading commands work on a store that cannot be written (the file, its
// directory, or its file system read-only) and leave nothing beside it;
// writing commands fail with one line; a store that needs an upgrade in
// that state says so. As root, file permissions bind nobody, so those
// cases run loom as the user nobody, and the file system case mounts a
// read-only tmpfs where that is permitted.
func TestBinaryReadOnlyStore(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "read-only files are the SQLite engine's")
	src := clitest.NewFixture(t)
	for _, place := range fsfault.ReadOnlyKinds {
		t.Run(place, func(t *testing.T) {
			dir := fsfault.SharedDir(t, "loom-cli-ro-", 0o777)
			db := filepath.Join(dir, "sessions.db")
			old := filepath.Join(dir, "old.db")
			fsfault.CopyFile(t, src.DB, db, 0o644)
			fsfault.CopyFile(t, src.DB, old, 0o644)
			lowerSchema(t, src, old)
			asNobody := fsfault.MakeReadOnly(t, place, dir, db, old)
			before, _ := os.ReadDir(dir)
			run := func(args ...string) clitest.Result {
				return execAs(t, dir, asNobody, append([]string{"--db", db}, args...)...)
			}
			must := func(args ...string) string {
				t.Helper()
				r := run(args...)
				if r.Code != 0 {
					t.Fatalf("loom %s: exit %d, %q", strings.Join(args, " "), r.Code, r.Stderr)
				}
				return r.Stdout
			}
			if rows := clitest.Lines(must("session", "list", "--all-projects")); len(rows) != 7 {
				t.Fatalf("list of a read-only store: %d rows", len(rows))
			}
			if out := must("session", "show", src.Main.ID); !strings.Contains(out, "Fix the flaky test") {
				t.Fatalf("show:\n%s", out)
			}
			if hits := clitest.DecodeJSON[[]loom.SearchHit](t, must("search", "-a", "fake clock", "--json")); len(hits) == 0 || hits[0].SessionID != src.Main.ID {
				t.Fatalf("search hits = %+v", hits)
			}
			if out := must("session", "export", src.Main.ID); len(clitest.Lines(out)) < 10 {
				t.Fatalf("export:\n%s", out)
			}
			for _, args := range [][]string{{"session", "rename", src.Main.ID, "new title"}, {"session", "delete", src.Main.ID, "--yes"}} {
				r := run(args...)
				if r.Code != cli.ExitError || !strings.HasPrefix(r.Stderr, "loom: cannot write "+db+": ") || !strings.Contains(r.Stderr, "read-only") || len(clitest.Lines(r.Stderr)) != 1 {
					t.Errorf("loom %s on a read-only store: exit %d, %q", strings.Join(args, " "), r.Code, r.Stderr)
				}
			}
			if after, _ := os.ReadDir(dir); len(after) != len(before) {
				t.Fatalf("reading left files beside the store: %v", after)
			}
			r := execAs(t, dir, asNobody, "--db", old, "session", "list", "--all-projects")
			want := regexp.MustCompile("^loom: " + regexp.QuoteMeta(old) + ` needs an upgrade to schema [0-9]+ but is read-only; open it once with write access\n$`)
			if r.Code != cli.ExitError || !want.MatchString(r.Stderr) {
				t.Fatalf("list of a read-only store that needs an upgrade: exit %d, %q; want %s", r.Code, r.Stderr, want)
			}
		})
	}
}

// execAs runs loom in dir, as the user nobody when asked.
func execAs(t *testing.T, dir string, nobody bool, args ...string) clitest.Result {
	t.Helper()
	bin := clitest.LoomBinary(t)
	home := fsfault.SharedDir(t, "loom-cli-ro-", 0o777)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"LOOM_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")}
	if nobody {
		// The binary's directory must be open to nobody.
		mustDo(t, os.Chmod(filepath.Dir(bin), 0o755))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	r, err := clitest.RunCmd(cmd, "")
	if nobody && errors.Is(err, syscall.EPERM) {
		t.Skipf("running a process as nobody is not permitted here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// lowerSchema makes the store at path say it is at schema 1, as one
// written by an older loom would.
func lowerSchema(t *testing.T, fx *clitest.Fixture, path string) {
	t.Helper()
	st, err := clitest.OpenFixtureStore(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DB().Exec(`PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	mustDo(t, st.Close())
}

func mustDo(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
