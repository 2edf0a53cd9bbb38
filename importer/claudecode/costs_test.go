package claudecode

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// Claude Code 2.1.330 writes lines that hold nothing of the
// conversation: the requests it sent (api-request, and the
// api-request-blob and api-request-shape they are made of), its running
// cost totals (cost-state), the tools used, the permission mode and a
// latch of its own. They are skipped by name, not as unknown. The model
// call that made a /compact summary is in no message: its usage is what
// the cost-state totals grew by around the compaction, and counts on the
// summary. The file is what Claude Code 2.1.330 wrote for a sub-agent,
// /compact and a turn after it (with the bulkiest request and
// attachment lines left out).
func TestCostStateAndRequestLines(t *testing.T) {
	res := readFiles(t, "testdata/c1a0e5c0-0000-4000-8000-000000000004.jsonl")
	for name := range res.Skipped {
		if strings.HasPrefix(name, "unknown:") {
			t.Errorf("skipped %s %d times", name, res.Skipped[name])
		}
	}
	for _, name := range []string{"api-request", "api-request-blob", "atis-latch", "cost-state", "tools-used", "mode"} {
		if res.Skipped[name] == 0 {
			t.Errorf("no %s line skipped: %v", name, res.Skipped)
		}
	}
	s := res.Sessions[0]
	var summary *loom.Message
	var total loom.Usage
	for _, m := range s.Messages {
		total.Add(m.Usage)
		if m.Role == loom.RoleSummary {
			if summary != nil {
				t.Errorf("two summaries")
			}
			summary = m
		}
	}
	if summary == nil {
		t.Fatal("no summary")
	}
	if u := summary.Usage; u.InputTokens != 1900 || u.OutputTokens != 30 || u.APICalls != 1 || u.Compactions != 1 || summary.Model != "claude-sonnet-4-5" {
		t.Errorf("summary %s usage %+v, want the /compact call's 1900 in, 30 out", summary.Model, u)
	}
	// The session's own calls, the sub-agent's (1800 in, 5 out) aside:
	// what the last cost-state line counts for both.
	if total.InputTokens != 10500-1800 || total.OutputTokens != 63-5 || total.Compactions != 1 {
		t.Errorf("session usage %+v, want 8700 in and 58 out", total)
	}
}
