package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		".codex/sessions/2026/07/20/" + codexFile:                                               readFile(t, "../importer/codex/testdata/"+codexFile),
		".gemini/tmp/0a1b2c/chats/session-2026-07-21T10-00-resume.jsonl":                        readFile(t, "../importer/gemini/testdata/resume.jsonl"),
	}
	home := func(fx *fixture) {
		for rel, data := range files {
			p := filepath.Join(fx.home, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	live := newEmptyFixture(t)
	home(live)
	r := live.runWith(t, runOpts{before: allFormats}, "usage", "daily", "--tz", "UTC", "--json")
	if r.code != 0 || !strings.Contains(r.stderr, "Imported 3 new or grown sessions") || !strings.Contains(r.stderr, "claude-code, codex, gemini") {
		t.Fatalf("first report: exit %d, stderr %q", r.code, r.stderr)
	}
	first := r.stdout

	explicit := newEmptyFixture(t)
	home(explicit)
	for _, tool := range []string{"claude-code", "codex", "gemini"} {
		if r := explicit.runWith(t, runOpts{before: allFormats}, "session", "import", "--from", tool); r.code != 0 {
			t.Fatalf("import %s: exit %d: %s", tool, r.code, r.stderr)
		}
	}
	want := explicit.runWith(t, runOpts{before: allFormats}, "usage", "daily", "--tz", "UTC", "--json", "--no-import").stdout
	if first != want || !strings.Contains(first, `"period": "2026-05-18"`) {
		t.Fatalf("the report after a live import:\n%s\nafter an explicit one:\n%s", first, want)
	}

	r = live.runWith(t, runOpts{before: allFormats}, "usage", "daily", "--tz", "UTC", "--json")
	if r.code != 0 || r.stderr != "" || r.stdout != first {
		t.Fatalf("second report: exit %d, stderr %q, same %v", r.code, r.stderr, r.stdout == first)
	}

	// Grown: a reply appended to the Claude Code session is counted by
	// the next report of any kind.
	p := filepath.Join(live.home, ".claude/projects/-home-dev-projects-ledger/7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14.jsonl")
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
	if r := live.runWith(t, runOpts{before: allFormats}, "usage", "--no-import"); strings.Contains(r.stderr, "Imported") {
		t.Fatalf("--no-import imported: %q", r.stderr)
	}
	r = live.runWith(t, runOpts{before: allFormats}, "usage")
	if r.code != 0 || !strings.Contains(r.stderr, "Imported 1 new or grown session (1 message) from claude-code") {
		t.Fatalf("a grown session: exit %d, stderr %q", r.code, r.stderr)
	}

	// Nothing anywhere: one line says where loom looked.
	empty := newEmptyFixture(t)
	r = empty.runWith(t, runOpts{before: allFormats}, "usage", "daily")
	if r.code != 0 || !strings.Contains(r.stderr, "No agent history on this machine: loom looked in") ||
		!strings.Contains(r.stderr, "--from list shows them") {
		t.Fatalf("empty machine: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := empty.runWith(t, runOpts{before: allFormats}, "usage", "daily", "--no-import"); strings.Contains(r.stderr, "looked in") {
		t.Fatalf("--no-import looked: %q", r.stderr)
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
