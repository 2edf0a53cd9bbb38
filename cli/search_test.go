package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/loomhq/loom"
)

func TestSearch(t *testing.T) {
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
	if out := fx.mustRun(t, "search", "deploy"); !strings.Contains(out, fx.web.ID) {
		t.Fatalf("default search is not across projects:\n%s", out)
	}
	if out := fx.mustRun(t, "search", "deploy", "--project"); out != "" {
		t.Fatalf("--project found another project's message:\n%s", out)
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
