package usage_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/report"
)

// loom usage statusline turns Claude Code's status line JSON into one
// line: the model, the session's cost (loom's, once imported; Claude
// Code's before), today's cost, the active block with its time left and
// burn rate, and the context left.
func TestUsageStatusline(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	// claudeLines moved to the fixture's day: its clock reads 12:00 UTC
	// on 2025-05-01, in the block that began at 11:00.
	lines := strings.NewReplacer("2026-05-18T14:02", "2025-05-01T11:02", "2026-05-18T23:50", "2025-05-01T11:30",
		"2026-05-19T00:10", "2025-05-01T11:40").Replace(claudeLines)
	p := filepath.Join(t.TempDir(), "7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14.jsonl")
	if err := os.WriteFile(p, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "import", "--from", "claude-code", p); r.Code != 0 {
		t.Fatalf("import: exit %d: %s", r.Code, r.Stderr)
	}
	day := clitest.DecodeJSON[report.Report](t, fx.MustRun(t, "usage", "daily", "--tz", "UTC", "--json", "--no-import"))
	cost := human.Cost(day.Total.Cost())
	if day.Total.Cost() < 0.03 {
		t.Fatalf("the day's cost %v", day.Total.Cost())
	}

	payload := `{"hook_event_name":"Status","session_id":"7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14","transcript_path":"` + p + `",
		"cwd":"/home/dev/projects/ledger","model":{"id":"claude-sonnet-4-5","display_name":"Sonnet 4.5"},
		"workspace":{"current_dir":"/home/dev/projects/ledger","project_dir":"/home/dev/projects/ledger"},"version":"2.1.62",
		"cost":{"total_cost_usd":9.99,"total_duration_ms":45000},
		"context_window":{"total_input_tokens":15234,"total_output_tokens":4521,"context_window_size":200000,
		"current_usage":{"input_tokens":1000,"output_tokens":200,"cache_creation_input_tokens":0,"cache_read_input_tokens":49000}}}`
	r := fx.RunWith(t, clitest.RunOpts{Stdin: payload, Env: map[string]string{"TZ": "UTC"}}, "usage", "statusline")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	line := strings.TrimSuffix(r.Stdout, "\n")
	want := "Sonnet 4.5 · session " + cost + " · today " + cost + " · block " + cost + ", "
	if strings.Count(r.Stdout, "\n") != 1 || !strings.HasPrefix(line, want) || !strings.Contains(line, " left, $") ||
		!strings.HasSuffix(line, "/h · 75% context left") {
		t.Fatalf("status line %q, want it to start %q", line, want)
	}

	// A session loom has not imported yet: Claude Code's own figure.
	other := strings.Replace(payload, "7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14", "11111111-2222-4333-8444-555555555555", 1)
	if r := fx.RunWith(t, clitest.RunOpts{Stdin: other}, "usage", "statusline"); !strings.Contains(r.Stdout, "session $9.99 · today "+cost) {
		t.Fatalf("a session not imported: %q %s", r.Stdout, r.Stderr)
	}
	if r := fx.RunWith(t, clitest.RunOpts{Stdin: "not json"}, "usage", "statusline"); r.Code != 2 || !strings.Contains(r.Stderr, "status line JSON") {
		t.Fatalf("bad input: exit %d: %s", r.Code, r.Stderr)
	}
}
