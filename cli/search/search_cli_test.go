package search_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

func TestSearch(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	out := fx.MustRun(t, "search", "fake", "clock")
	if !strings.Contains(out, fx.Main.ID+"\t5\tuser\t") || !strings.Contains(out, "**fake** **clock**") {
		t.Fatalf("search:\n%s", out)
	}
	if strings.Contains(out, "Bob") {
		t.Fatal("search sees another user's sessions")
	}
	for _, q := range []string{`he said "hi" AND (NEAR* -x`, `"`, `AND OR NOT`, `col:umn`, `*`, `-`} {
		if r := fx.Run(t, "search", q); r.Code != 0 {
			t.Fatalf("search %q: exit %d: %s", q, r.Code, r.Stderr)
		}
	}
	hits := clitest.DecodeJSON[[]loom.SearchHit](t, fx.MustRun(t, "search", "TestRetry", "--json"))
	if len(hits) == 0 {
		t.Fatal("no hits for TestRetry")
	}
	var raw []map[string]any
	json.Unmarshal([]byte(fx.MustRun(t, "search", "TestRetry", "--json")), &raw)
	for _, k := range []string{"session_id", "message_id", "seq", "role", "score", "snippet", "created_at"} {
		if _, ok := raw[0][k]; !ok {
			t.Errorf("hit JSON lacks %q", k)
		}
	}
	// Filters.
	if out := fx.MustRun(t, "search", "deploy", "--all-projects"); !strings.Contains(out, fx.Web.ID) {
		t.Fatalf("--all-projects is not across projects:\n%s", out)
	}
	out = fx.MustRun(t, "search", "retry", "--session", "explore retry")
	if len(clitest.Lines(out)) != 2 {
		t.Fatalf("--session:\n%s", out)
	}
	for _, l := range clitest.Lines(out) {
		if !strings.HasPrefix(l, fx.Sub.ID+"\t") {
			t.Fatalf("--session found another session's message:\n%s", out)
		}
	}
	hits = clitest.DecodeJSON[[]loom.SearchHit](t, fx.MustRun(t, "search", "clock", "--role", "assistant", "--json"))
	for _, h := range hits {
		if h.Role != loom.RoleAssistant {
			t.Fatalf("--role assistant returned a %s message", h.Role)
		}
	}
	if got := clitest.DecodeJSON[[]loom.SearchHit](t, fx.MustRun(t, "search", "clock", "--limit", "1", "--json")); len(got) != 1 {
		t.Fatalf("--limit 1 gave %d", len(got))
	}
	// --raw is the engine's own syntax, and so is its prefix query.
	prefix := "TestR*"
	if clitest.OnPostgres() {
		prefix = "TestR:*"
	}
	if got := clitest.DecodeJSON[[]loom.SearchHit](t, fx.MustRun(t, "search", prefix, "--raw", "--json")); len(got) == 0 {
		t.Fatal("--raw prefix query found nothing")
	}
	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "search", "fake", "clock")
	if !strings.Contains(r.Stdout, "\x1b[1;33mfake\x1b[m") || !strings.Contains(ansi.Strip(r.Stdout), fx.Main.ID[:8]+"  Fix the flaky test  #5 user") {
		t.Fatalf("terminal search:\n%q", r.Stdout)
	}
}

// loom search keeps to this project by default, as session list and loom
// mcp do; -a searches every project, and -p (this project) is still
// accepted. A search that finds nothing in the project says on stderr
// how to search every project, with --json too, whose stdout stays [].
// A session named with --session is searched wherever it is, and where
// no project can be found (the working directory is gone) every project
// is searched.
func TestSearchScope(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	in := func(dir string, args ...string) clitest.Result {
		t.Helper()
		cmd := exec.Command(clitest.LoomBinary(t), args...)
		cmd.Dir = dir
		cmd.Env = fx.BinEnv()
		r := clitest.ExecCmd(t, cmd, "")
		if r.Code != 0 {
			t.Fatalf("loom %s in %s: exit %d\n%s", strings.Join(args, " "), dir, r.Code, r.Stderr)
		}
		return r
	}
	hint := fmt.Sprintf("No messages match %q in project %s (%s); loom search -a deploy searches every project.", "deploy", fx.Proj.Name, fx.Proj.Root)
	for _, args := range [][]string{{"search", "deploy"}, {"search", "-p", "deploy"}, {"search", "--project", "deploy"}} {
		if r := in(fx.Project, args...); r.Stdout != "" || strings.TrimSpace(r.Stderr) != hint {
			t.Errorf("loom %s in the api project:\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Stdout, r.Stderr)
		}
	}
	if r := in(fx.Project, "search", "deploy", "--json"); strings.TrimSpace(r.Stdout) != "[]" || strings.TrimSpace(r.Stderr) != hint {
		t.Errorf("--json in the api project:\nstdout: %s\nstderr: %s", r.Stdout, r.Stderr)
	}
	if r := in(fx.Project, "search", "-a", "deploy"); !strings.Contains(r.Stdout, fx.Web.ID) || r.Stderr != "" {
		t.Errorf("-a in the api project:\nstdout: %s\nstderr: %s", r.Stdout, r.Stderr)
	}
	if r := in(fx.Other, "search", "deploy"); !strings.Contains(r.Stdout, fx.Web.ID) {
		t.Errorf("search in the web project:\n%s", r.Stdout)
	}
	if r := in(fx.Other, "search", "clock"); r.Stdout != "" || !strings.Contains(r.Stderr, "in project "+fx.OtherP.Name) {
		t.Errorf("the web project's search found the api project's messages:\nstdout: %s\nstderr: %s", r.Stdout, r.Stderr)
	}
	r := in(fx.Other, "search", "retry", "--session", "explore retry")
	if rows := clitest.Lines(r.Stdout); len(rows) != 2 || !strings.HasPrefix(rows[0], fx.Sub.ID+"\t") {
		t.Errorf("--session of another project's session:\n%s", r.Stdout)
	}
	// The other flags go into the command that searches everywhere.
	r = in(fx.Project, "search", "--role", "user", "--surface", "cli", "how we deploy")
	if want := "loom search -a --surface cli --role user 'how we deploy' searches every project."; !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr has no %q:\n%s", want, r.Stderr)
	}

	// No project where the working directory is gone.
	gone := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `cd "$1" && rmdir "$1" && exec "$2" search deploy`, "sh", gone, clitest.LoomBinary(t))
	cmd.Env = fx.BinEnv()
	if r := clitest.ExecCmd(t, cmd, ""); r.Code != 0 || !strings.Contains(r.Stdout, fx.Web.ID) || r.Stderr != "" {
		t.Errorf("search where the working directory is gone: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
}

// Chat's /search keeps to this project too; /search -a searches every
// project, and a search that finds nothing here but matches elsewhere
// says how to widen.
func TestChatSearchScope(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	web := fx.Cmd(t, "run", "how do we deploy the web app?")
	web.Dir = fx.Other
	r := clitest.ExecCmd(t, web, "")
	if r.Code != 0 {
		t.Fatalf("run in the web project: exit %d\n%s", r.Code, r.Stderr)
	}
	id := clitest.SessionOf(t, r.Stderr)
	r = fx.MustLoom(t, "/search deploy\n/search -a deploy\n", "chat", "--new")
	hint := fmt.Sprintf("No messages match %q in project %s (%s); /search -a deploy searches every project.", "deploy", fx.Proj.Name, fx.Proj.Root)
	if !strings.Contains(r.Stderr, hint) {
		t.Errorf("/search deploy in the api project: stderr has no %q:\n%s", hint, r.Stderr)
	}
	// Only /search -a prints hits.
	rows := clitest.Lines(r.Stdout)
	for _, row := range rows {
		if !strings.HasPrefix(row, id+"\t") {
			rows = nil
		}
	}
	if len(rows) == 0 {
		t.Errorf("/search -a deploy should find session %s only:\nstdout: %s\nstderr: %s", id, r.Stdout, r.Stderr)
	}
}
