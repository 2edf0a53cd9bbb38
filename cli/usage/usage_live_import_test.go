package usage_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// A report counts what the agents wrote even when nothing imported it:
// on a home holding only Claude Code, Codex and Gemini CLI files, the
// first `loom usage daily` imports them (and says so in one line), and
// reports what an explicit import of the same files reports; a second
// run imports nothing and says nothing; --no-import reports the store as
// it is; and a machine with no agent history says where loom looked.
func TestUsageImportsFirst(t *testing.T) {
	t.Parallel()
	codexFile := "rollout-2026-07-20T09-14-03-019f7ecd-c978-7a41-9c3e-5b1f0d2e8a47.jsonl"
	files := map[string]string{
		".claude/projects/-home-dev-projects-ledger/7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14.jsonl": claudeLines,
		".codex/sessions/2026/07/20/" + codexFile:                                               readFile(t, "../../importer/codex/testdata/"+codexFile),
		".gemini/tmp/0a1b2c/chats/session-2026-07-21T10-00-resume.jsonl":                        readFile(t, "../../importer/gemini/testdata/resume.jsonl"),
	}
	home := func(fx *clitest.Fixture) {
		for rel, data := range files {
			p := filepath.Join(fx.Home, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	live := clitest.NewEmptyFixture(t)
	home(live)
	r := live.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "usage", "daily", "--tz", "UTC", "--json")
	if r.Code != 0 || !strings.Contains(r.Stderr, "Imported 3 new or grown sessions") || !strings.Contains(r.Stderr, "claude-code, codex, gemini") {
		t.Fatalf("first report: exit %d, stderr %q", r.Code, r.Stderr)
	}
	first := r.Stdout

	explicit := clitest.NewEmptyFixture(t)
	home(explicit)
	for _, tool := range []string{"claude-code", "codex", "gemini"} {
		if r := explicit.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "import", "--from", tool); r.Code != 0 {
			t.Fatalf("import %s: exit %d: %s", tool, r.Code, r.Stderr)
		}
	}
	want := explicit.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "usage", "daily", "--tz", "UTC", "--json", "--no-import").Stdout
	if first != want || !strings.Contains(first, `"period": "2026-05-18"`) {
		t.Fatalf("the report after a live import:\n%s\nafter an explicit one:\n%s", first, want)
	}

	r = live.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "usage", "daily", "--tz", "UTC", "--json")
	if r.Code != 0 || r.Stderr != "" || r.Stdout != first {
		t.Fatalf("second report: exit %d, stderr %q, same %v", r.Code, r.Stderr, r.Stdout == first)
	}

	// Grown: a reply appended to the Claude Code session is counted by
	// the next report of any kind.
	p := filepath.Join(live.Home, ".claude/projects/-home-dev-projects-ledger/7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14.jsonl")
	more := strings.ReplaceAll(strings.Split(strings.TrimSpace(claudeLines), "\n")[6], `"msg_C"`, `"msg_D"`)
	more = strings.ReplaceAll(strings.ReplaceAll(more, `"uuid":"c1"`, `"uuid":"d1"`), `"parentUuid":"b1"`, `"parentUuid":"c1"`)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(more + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if r := live.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "usage", "--no-import"); strings.Contains(r.Stderr, "Imported") {
		t.Fatalf("--no-import imported: %q", r.Stderr)
	}
	r = live.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "usage")
	if r.Code != 0 || !strings.Contains(r.Stderr, "Imported 1 new or grown session (1 message) from claude-code") {
		t.Fatalf("a grown session: exit %d, stderr %q", r.Code, r.Stderr)
	}

	// Nothing anywhere: one line says where loom looked.
	empty := clitest.NewEmptyFixture(t)
	r = empty.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "usage", "daily")
	if r.Code != 0 || !strings.Contains(r.Stderr, "No agent history on this machine: loom looked in") ||
		!strings.Contains(r.Stderr, "--from list shows them") {
		t.Fatalf("empty machine: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if r := empty.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "usage", "daily", "--no-import"); strings.Contains(r.Stderr, "looked in") {
		t.Fatalf("--no-import looked: %q", r.Stderr)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
