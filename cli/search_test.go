package cli

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
)

func TestSearch(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	out := fx.mustRun(t, "search", "fake", "clock")
	if !strings.Contains(out, fx.main.ID+"\t5\tuser\t") || !strings.Contains(out, "**fake** **clock**") {
		t.Fatalf("search:\n%s", out)
	}
	if strings.Contains(out, "Bob") {
		t.Fatal("search sees another user's sessions")
	}
	for _, q := range []string{`he said "hi" AND (NEAR* -x`, `"`, `AND OR NOT`, `col:umn`, `*`, `-`} {
		if r := fx.run(t, "search", q); r.code != 0 {
			t.Fatalf("search %q: exit %d: %s", q, r.code, r.stderr)
		}
	}
	hits := decodeJSON[[]loom.SearchHit](t, fx.mustRun(t, "search", "TestRetry", "--json"))
	if len(hits) == 0 {
		t.Fatal("no hits for TestRetry")
	}
	var raw []map[string]any
	json.Unmarshal([]byte(fx.mustRun(t, "search", "TestRetry", "--json")), &raw)
	for _, k := range []string{"session_id", "message_id", "seq", "role", "score", "snippet", "created_at"} {
		if _, ok := raw[0][k]; !ok {
			t.Errorf("hit JSON lacks %q", k)
		}
	}
	// Filters.
	if out := fx.mustRun(t, "search", "deploy", "--all-projects"); !strings.Contains(out, fx.web.ID) {
		t.Fatalf("--all-projects is not across projects:\n%s", out)
	}
	out = fx.mustRun(t, "search", "retry", "--session", "explore retry")
	if len(lines(out)) != 2 {
		t.Fatalf("--session:\n%s", out)
	}
	for _, l := range lines(out) {
		if !strings.HasPrefix(l, fx.sub.ID+"\t") {
			t.Fatalf("--session found another session's message:\n%s", out)
		}
	}
	hits = decodeJSON[[]loom.SearchHit](t, fx.mustRun(t, "search", "clock", "--role", "assistant", "--json"))
	for _, h := range hits {
		if h.Role != loom.RoleAssistant {
			t.Fatalf("--role assistant returned a %s message", h.Role)
		}
	}
	if got := decodeJSON[[]loom.SearchHit](t, fx.mustRun(t, "search", "clock", "--limit", "1", "--json")); len(got) != 1 {
		t.Fatalf("--limit 1 gave %d", len(got))
	}
	// --raw is the engine's own syntax, and so is its prefix query.
	prefix := "TestR*"
	if onPostgres() {
		prefix = "TestR:*"
	}
	if got := decodeJSON[[]loom.SearchHit](t, fx.mustRun(t, "search", prefix, "--raw", "--json")); len(got) == 0 {
		t.Fatal("--raw prefix query found nothing")
	}
	r := fx.runWith(t, runOpts{tty: true}, "search", "fake", "clock")
	if !strings.Contains(r.stdout, "\x1b[1;33mfake\x1b[m") || !strings.Contains(ansi.Strip(r.stdout), fx.main.ID[:8]+"  Fix the flaky test  #5 user") {
		t.Fatalf("terminal search:\n%q", r.stdout)
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
	fx := newFixture(t)
	in := func(dir string, args ...string) result {
		t.Helper()
		cmd := exec.Command(loomBinary(t), args...)
		cmd.Dir = dir
		cmd.Env = fx.binEnv()
		r := execCmd(t, cmd, "")
		if r.code != 0 {
			t.Fatalf("loom %s in %s: exit %d\n%s", strings.Join(args, " "), dir, r.code, r.stderr)
		}
		return r
	}
	hint := fmt.Sprintf("No messages match %q in project %s (%s); loom search -a deploy searches every project.", "deploy", fx.proj.Name, fx.proj.Root)
	for _, args := range [][]string{{"search", "deploy"}, {"search", "-p", "deploy"}, {"search", "--project", "deploy"}} {
		if r := in(fx.project, args...); r.stdout != "" || strings.TrimSpace(r.stderr) != hint {
			t.Errorf("loom %s in the api project:\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.stdout, r.stderr)
		}
	}
	if r := in(fx.project, "search", "deploy", "--json"); strings.TrimSpace(r.stdout) != "[]" || strings.TrimSpace(r.stderr) != hint {
		t.Errorf("--json in the api project:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
	if r := in(fx.project, "search", "-a", "deploy"); !strings.Contains(r.stdout, fx.web.ID) || r.stderr != "" {
		t.Errorf("-a in the api project:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
	if r := in(fx.other, "search", "deploy"); !strings.Contains(r.stdout, fx.web.ID) {
		t.Errorf("search in the web project:\n%s", r.stdout)
	}
	if r := in(fx.other, "search", "clock"); r.stdout != "" || !strings.Contains(r.stderr, "in project "+fx.otherP.Name) {
		t.Errorf("the web project's search found the api project's messages:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
	r := in(fx.other, "search", "retry", "--session", "explore retry")
	if rows := lines(r.stdout); len(rows) != 2 || !strings.HasPrefix(rows[0], fx.sub.ID+"\t") {
		t.Errorf("--session of another project's session:\n%s", r.stdout)
	}
	// The other flags go into the command that searches everywhere.
	r = in(fx.project, "search", "--role", "user", "--surface", "cli", "how we deploy")
	if want := "loom search -a --surface cli --role user 'how we deploy' searches every project."; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr has no %q:\n%s", want, r.stderr)
	}

	// No project where the working directory is gone.
	gone := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `cd "$1" && rmdir "$1" && exec "$2" search deploy`, "sh", gone, loomBinary(t))
	cmd.Env = fx.binEnv()
	if r := execCmd(t, cmd, ""); r.code != 0 || !strings.Contains(r.stdout, fx.web.ID) || r.stderr != "" {
		t.Errorf("search where the working directory is gone: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// Chat's /search keeps to this project too; /search -a searches every
// project, and a search that finds nothing here but matches elsewhere
// says how to widen.
func TestChatSearchScope(t *testing.T) {
	t.Parallel()
	fx := newAgentFixture(t)
	web := fx.cmd(t, "run", "how do we deploy the web app?")
	web.Dir = fx.other
	r := execCmd(t, web, "")
	if r.code != 0 {
		t.Fatalf("run in the web project: exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.stderr)
	r = fx.mustLoom(t, "/search deploy\n/search -a deploy\n", "chat", "--new")
	hint := fmt.Sprintf("No messages match %q in project %s (%s); /search -a deploy searches every project.", "deploy", fx.proj.Name, fx.proj.Root)
	if !strings.Contains(r.stderr, hint) {
		t.Errorf("/search deploy in the api project: stderr has no %q:\n%s", hint, r.stderr)
	}
	// Only /search -a prints hits.
	rows := lines(r.stdout)
	for _, row := range rows {
		if !strings.HasPrefix(row, id+"\t") {
			rows = nil
		}
	}
	if len(rows) == 0 {
		t.Errorf("/search -a deploy should find session %s only:\nstdout: %s\nstderr: %s", id, r.stdout, r.stderr)
	}
}
