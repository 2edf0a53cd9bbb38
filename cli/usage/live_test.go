package usage

import (
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/report"
)

// blocks --live (or --watch) fills the options of the live redraw.
func TestNewCmdUsageBlocksLiveOptions(t *testing.T) {
	t.Parallel()
	blocks := reportCmd("blocks", report.Block)
	got := cmdtest.Options(t, blocks, "--live", "--interval", "2s", "--frames", "3")
	if !got.report.live || got.report.interval != 2*time.Second || got.report.frames != 3 || got.report.by != report.Block {
		t.Errorf("--live: %+v", got.report)
	}
	if got := cmdtest.Options(t, blocks, "--watch"); !got.report.live || got.report.interval != 5*time.Second || got.report.frames != 0 {
		t.Errorf("--watch: %+v", got.report)
	}
	if got := cmdtest.Options(t, blocks); got.report.live {
		t.Errorf("blocks without --live: %+v", got.report)
	}
	cmdtest.Rejects(t, blocks, "--interval", "soon")
}

// Off a terminal, each redraw of the active block is one line.
func TestUsageLiveRunPrintsALinePerRedraw(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	opts, ios := w.options()
	opts.report.by, opts.report.live, opts.report.interval, opts.report.frames = report.Block, true, 100*time.Millisecond, 2
	opts.ThisProject = true
	if err := usageReportRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	rs := rows(text(ios.Out))
	if len(rs) != 2 {
		t.Fatalf("%d lines, want 2 redraws:\n%s", len(rs), text(ios.Out))
	}
	for _, r := range rs {
		if len(r) != 11 || r[1] != "active" || r[4] != "1100000" || r[5] != "4.5" {
			t.Errorf("a redraw %q, want the active block of 1,100,000 tokens for $4.50", r)
		}
	}
	opts.report.interval = time.Millisecond
	if err := usageReportRun(t.Context(), opts); err == nil || !strings.Contains(err.Error(), "--interval must be at least 100ms") {
		t.Errorf("--interval 1ms: %v", err)
	}
}

// With no active block, the live view names the last one's tokens and
// cost in words, "cost unknown" where no model of it is priced.
func TestDrawLiveBlockUnknownCost(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 20, 0, 0, 0, time.UTC)
	rep := &report.Report{By: report.Block, Rows: []report.Row{{Period: "2026-03-02 03:00", Start: now.Add(-17 * time.Hour),
		End: now.Add(-12 * time.Hour), Totals: report.Totals{TotalTokens: 15823704}, Block: &report.BlockInfo{}}}}
	var b strings.Builder
	drawLiveBlock(&b, term.NewColorScheme(false), rep, now, 5*time.Second)
	if got := b.String(); !strings.Contains(got, "The last block was 2026-03-02 03:00–08:00: 15,823,704 tokens, cost unknown.") || strings.Contains(got, "—") {
		t.Errorf("live view:\n%s", got)
	}
}
