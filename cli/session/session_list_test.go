package session_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

func TestSessionListPiped(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	out := fx.MustRun(t, "session", "list")
	rows := clitest.Lines(out)
	// This project: main, fork, sub-agent, two twins; newest first.
	if len(rows) != 5 {
		t.Fatalf("want 5 rows of this project, got %d:\n%s", len(rows), out)
	}
	first := strings.Split(rows[0], "\t")
	if len(first) != 7 {
		t.Fatalf("row has %d tab-separated columns: %q", len(first), rows[0])
	}
	if first[0] != fx.Twin2.ID || first[1] != "Twin" || first[2] != "cli:api:2" || first[5] != "1" || first[6] != "second twin" {
		t.Fatalf("first row = %q", first)
	}
	if _, err := time.Parse(time.RFC3339, first[3]); err != nil {
		t.Fatalf("created is not RFC 3339: %q", first[3])
	}
	if strings.Contains(out, "Deploy notes") || strings.Contains(out, "Telegram") || strings.Contains(out, "Bob") {
		t.Fatalf("other projects or users listed:\n%s", out)
	}

	all := clitest.Lines(fx.MustRun(t, "session", "list", "--all-projects"))
	if len(all) != 7 {
		t.Fatalf("--all-projects: %d rows", len(all))
	}
	if got := clitest.Lines(fx.MustRun(t, "session", "list", "--all-projects", "--surface", "telegram")); len(got) != 1 || !strings.Contains(got[0], fx.Tg.ID) {
		t.Fatalf("--surface telegram = %q", got)
	}
	if got := clitest.Lines(fx.MustRun(t, "session", "list", "--limit", "2")); len(got) != 2 {
		t.Fatalf("--limit 2 gave %d rows", len(got))
	}
	// Another user sees only their own.
	if got := fx.MustRun(t, "session", "list", "--user", "bob"); !strings.Contains(got, "Bob's flaky test") || len(clitest.Lines(got)) != 1 {
		t.Fatalf("bob's list = %q", got)
	}
	r := fx.RunWith(t, clitest.RunOpts{Env: map[string]string{"LOOM_USER": "bob"}}, "session", "list")
	if !strings.Contains(r.Stdout, "Bob's flaky test") {
		t.Fatalf("LOOM_USER=bob list = %q", r.Stdout)
	}
}

func TestSessionListTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "list")
	if r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	rows := clitest.Lines(r.Stdout)
	if !strings.Contains(ansi.Strip(rows[0]), "ID") || !strings.Contains(ansi.Strip(rows[0]), "LAST PROMPT") {
		t.Fatalf("no header: %q", rows[0])
	}
	if !strings.Contains(r.Stdout, "\x1b[") {
		t.Fatal("a terminal gets colour")
	}
	plain := ansi.Strip(r.Stdout)
	if !strings.Contains(plain, fx.Main.ID[:8]+" ") || strings.Contains(plain, fx.Main.ID) {
		t.Fatalf("terminal ids are not shortened to 8:\n%s", plain)
	}
	if !strings.Contains(plain, "1h ago") {
		t.Fatalf("terminal times are not ages:\n%s", plain)
	}
	// Columns line up: every row has the title column at the same offset.
	col := strings.Index(clitest.Lines(plain)[0], "TITLE")
	for _, l := range clitest.Lines(plain)[1:] {
		if l[col-2:col] != "  " || l[col] == ' ' {
			t.Fatalf("misaligned row %q (title at %d)", l, col)
		}
	}

	for _, o := range []clitest.RunOpts{{Tty: true, Env: map[string]string{"NO_COLOR": "1"}}, {Tty: true}} {
		args := []string{"session", "list"}
		if o.Env == nil {
			args = append(args, "--no-color")
		}
		if r := fx.RunWith(t, o, args...); strings.Contains(r.Stdout, "\x1b[") {
			t.Fatalf("colour despite %v %v", o.Env, args)
		}
	}

	// An empty project says so on stderr and succeeds.
	r = fx.RunWith(t, clitest.RunOpts{Tty: true, Dir: t.TempDir()}, "session", "list")
	if r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "No sessions in") {
		t.Fatalf("empty project: %+v", r)
	}
}

// On a narrow terminal the list leaves columns out instead of wrapping
// rows: every line fits, and id, title and last activity stay.
func TestSessionListNarrow(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	for _, width := range []int{60, 80, 100} {
		r := fx.RunWith(t, clitest.RunOpts{Tty: true, Width: width}, "session", "list")
		if r.Code != 0 {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
		plain := ansi.Strip(r.Stdout)
		for _, line := range clitest.Lines(plain) {
			if w := ansi.StringWidth(line); w > width {
				t.Fatalf("%d columns: a %d-cell line wraps: %q\n%s", width, w, line, plain)
			}
		}
		head := clitest.Lines(plain)[0]
		for _, col := range []string{"ID", "TITLE", "UPDATED"} {
			if !strings.Contains(head, col) {
				t.Fatalf("%d columns: %s left out:\n%s", width, col, plain)
			}
		}
		if !strings.Contains(plain, fx.Main.ID[:8]) || !strings.Contains(plain, "Fix the flaky") {
			t.Fatalf("%d columns: rows lack id or title:\n%s", width, plain)
		}
		if width == 60 && strings.Contains(head, "CREATED") {
			t.Fatalf("60 columns still shows CREATED:\n%s", plain)
		}
	}
}

func TestSessionListJSON(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "list", "--json")
	got := clitest.DecodeJSON[[]*loom.Session](t, r.Stdout)
	if len(got) != 5 {
		t.Fatalf("%d sessions", len(got))
	}
	for _, s := range got {
		if len(s.ID) != 36 {
			t.Fatalf("--json id %q is not full", s.ID)
		}
	}
	var raw []map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "key", "title", "description", "user_id", "surface", "kind", "parent_id", "fork_turn", "project", "cwd",
		"model", "provider", "profile", "message_count", "turn_count", "last_prompt", "usage", "created_at", "updated_at", "deleted_at", "lock"} {
		if _, ok := raw[0][k]; !ok {
			t.Errorf("session JSON lacks %q", k)
		}
	}
	if ts := raw[0]["created_at"].(string); !strings.HasSuffix(ts, ".000Z") && len(ts) != len("2025-05-01T10:00:00.000Z") {
		t.Errorf("time %q is not RFC 3339 with milliseconds", ts)
	}
	// Empty: an empty array, not null.
	r = fx.RunWith(t, clitest.RunOpts{Dir: t.TempDir()}, "session", "list", "--json")
	if strings.TrimSpace(r.Stdout) != "[]" {
		t.Fatalf("empty list JSON = %q", r.Stdout)
	}
}

func TestSessionListTree(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	out := fx.MustRun(t, "session", "list", "--tree")
	rows := clitest.Lines(out)
	idx := func(id string) int {
		for i, r := range rows {
			if strings.HasPrefix(r, id+"\t") {
				return i
			}
		}
		t.Fatalf("%s not in tree:\n%s", id, out)
		return -1
	}
	m, sub, fork := idx(fx.Main.ID), idx(fx.Sub.ID), idx(fx.Fork.ID)
	if sub <= m || fork <= m {
		t.Fatalf("children not under their parent (main %d, sub %d, fork %d):\n%s", m, sub, fork, out)
	}
	// Two children: ├ before the first, └ before the last.
	first, last := min(sub, fork), max(sub, fork)
	if !strings.Contains(rows[sub], "sub-agent: explore retry") || !strings.Contains(rows[fork], "fork: flaky test, other approach") ||
		!strings.Contains(rows[first], "\t├ ") || !strings.Contains(rows[last], "\t└ ") {
		t.Fatalf("children not marked:\n%s", out)
	}
	if len(rows) != 5 {
		t.Fatalf("tree repeats or loses sessions:\n%s", out)
	}
}

// A list cut by --limit says on a terminal how many it left out, as usage
// does; piped and --json output is the rows alone.
func TestSessionListSaysHowManyMore(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t) // 7 sessions of local across projects
	plain := ansi.Strip(fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "list", "--all-projects", "--limit", "3").Stdout)
	if !strings.Contains(plain, "… and 4 more (--limit 0 lists all)") {
		t.Fatalf("terminal list cut at 3 of 7 has no footer:\n%s", plain)
	}
	if plain := ansi.Strip(fx.RunWith(t, clitest.RunOpts{Tty: true}, "session", "list", "--all-projects", "--limit", "7").Stdout); strings.Contains(plain, "more (--limit") {
		t.Fatalf("a whole list claims more:\n%s", plain)
	}
	if out := fx.MustRun(t, "session", "list", "--all-projects", "--limit", "3"); strings.Contains(out, "more") || len(clitest.Lines(out)) != 3 {
		t.Fatalf("piped list has a footer:\n%s", out)
	}
	if out := fx.MustRun(t, "session", "list", "--all-projects", "--limit", "3", "--json"); len(clitest.DecodeJSON[[]loom.Session](t, out)) != 3 {
		t.Fatalf("--json list:\n%s", out)
	}
}

// A surface no session has is a usage error naming the surfaces there
// are; a known surface with no session here is an empty list.
func TestSessionListRefusesUnknownSurface(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	for _, args := range [][]string{{"session", "list", "--surface", "bogus"}, {"search", "flaky", "--surface", "bogus"}} {
		r := fx.Exec(t, "", args...)
		if r.Code != cli.ExitUsage || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 ||
			!strings.Contains(r.Stderr, `--surface "bogus": no session has it; the surfaces are cli, http, telegram`) {
			t.Errorf("loom %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
	if r := fx.Exec(t, "", "session", "list", "--surface", "telegram"); r.Code != 0 || r.Stdout != "" {
		t.Errorf("a known surface with no session in this project: exit %d, %q %q", r.Code, r.Stdout, r.Stderr)
	}
}

// session list keeps to this project by default. An empty project says on
// stderr how to list every project, with --json too, whose stdout stays
// []; where no project can be found (the working directory is gone),
// every project is listed.
func TestSessionListScope(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	dir := t.TempDir()
	p := clitest.MustProject(t, dir)
	hint := fmt.Sprintf("No sessions in project %s (%s); loom session list -a lists every project's.", p.Name, p.Root)
	for _, args := range [][]string{{"session", "list"}, {"session", "list", "--json"}} {
		cmd := exec.Command(clitest.LoomBinary(t), args...)
		cmd.Dir, cmd.Env = dir, fx.BinEnv()
		r := clitest.ExecCmd(t, cmd, "")
		want := ""
		if slices.Contains(args, "--json") {
			want = "[]"
		}
		if r.Code != 0 || strings.TrimSpace(r.Stdout) != want || strings.TrimSpace(r.Stderr) != hint {
			t.Errorf("loom %s in an empty project: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
	gone := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `cd "$1" && rmdir "$1" && exec "$2" session list`, "sh", gone, clitest.LoomBinary(t))
	cmd.Env = fx.BinEnv()
	r := clitest.ExecCmd(t, cmd, "")
	if r.Code != 0 || !strings.Contains(r.Stdout, fx.Web.ID) || !strings.Contains(r.Stdout, fx.Main.ID) || r.Stderr != "" {
		t.Errorf("session list where the working directory is gone: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
}

// A tree's branches: ├ before a child with siblings after it, └ before
// the last, │ under an ancestor whose siblings follow.
func TestDrawBranches(t *testing.T) {
	t.Parallel()
	rows := []clitest.TreeRow{{Depth: 0}, {Depth: 1}, {Depth: 2}, {Depth: 2}, {Depth: 1}, {Depth: 2}, {Depth: 0}, {Depth: 1}}
	clitest.DrawBranches(rows)
	want := []string{"", "├ ", "│ ├ ", "│ └ ", "└ ", "  └ ", "", "└ "}
	for i, r := range rows {
		if r.Branch != want[i] {
			t.Errorf("row %d (depth %d): branch %q, want %q", i, r.Depth, r.Branch, want[i])
		}
	}
}
