package usage

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/report"
)

// reportCmd is newCmdUsageReport's builder of the report by by, for
// cmdtest.
func reportCmd(name, by string) func(*command.Invocation, func(*Options) error) *cobra.Command {
	return func(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
		return newCmdUsageReport(inv, name, by, "a report", runF)
	}
}

// The report commands fill the report's flags, ordered oldest first but
// for the report by session, and refuse --compact with --wide.
func TestNewCmdUsageReportOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, reportCmd("daily", report.Day), "--since", "7d", "--until", "2026-03-01", "--breakdown", "model", "--tz", "UTC",
		"--agent", "codex", "--csv", "-p", "--order", "desc", "--locale", "en-US", "--start-of-week", "sunday", "--compact", "--no-import")
	r := got.report
	if r.by != report.Day || r.since != "7d" || r.until != "2026-03-01" || r.breakdown != "model" || r.tz != "UTC" || r.agent != "codex" || !r.csv ||
		!got.ThisProject || r.order != "desc" || r.locale != "en-US" || r.startOfWeek != "sunday" || !r.compact || !r.noImport || got.User != "local" {
		t.Errorf("daily's options: %+v, report %+v", got, r)
	}
	if got := cmdtest.Options(t, reportCmd("monthly", report.Month)); got.report.by != report.Month || got.report.order != "asc" || got.ThisProject {
		t.Errorf("monthly's defaults: %+v", got.report)
	}
	if got := cmdtest.Options(t, reportCmd("session", report.Session)); got.report.order != "desc" {
		t.Errorf("session's order %q, want desc", got.report.order)
	}
	for _, bad := range [][]string{{"--compact", "--wide"}, {"extra"}, {"--live"}} {
		cmdtest.Rejects(t, reportCmd("weekly", report.Week), bad...)
	}
}

// A daily report has today's row with both sessions' tokens, priced
// where a price is known; --project keeps to this project.
func TestUsageReportRunDaily(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	daily := func(edit func(*Options)) (*report.Report, string) {
		t.Helper()
		opts, ios := w.options()
		opts.report.by, opts.JSON = report.Day, true
		if edit != nil {
			edit(opts)
		}
		if err := usageReportRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		var rep report.Report
		if err := json.Unmarshal([]byte(text(ios.Out)), &rep); err != nil {
			t.Fatalf("%v: %s", err, text(ios.Out))
		}
		return &rep, text(ios.ErrOut)
	}
	rep, _ := daily(nil)
	today := time.Now().Format("2006-01-02")
	if len(rep.Rows) != 1 || rep.Rows[0].Period != today || rep.Total.InputTokens != 1_002_000 || len(rep.Total.Unpriced) != 1 {
		t.Errorf("daily: %+v, want today's row of both sessions, one model unpriced", rep)
	}
	rep, _ = daily(func(o *Options) { o.ThisProject = true })
	if rep.Total.InputTokens != 1_000_000 || rep.Total.CostUSD == nil || *rep.Total.CostUSD != 4.5 || len(rep.Total.Unpriced) != 0 {
		t.Errorf("daily --project: %+v", rep.Total)
	}
	rep, _ = daily(func(o *Options) { o.report.agent = "cli" })
	if rep.Total.InputTokens != 2000 {
		t.Errorf("daily --agent cli: %+v", rep.Total)
	}
}

// --csv prints a header and each line's kind, the unpriced models on
// stderr; a terminal's table is left to people, scripts get kinds first.
func TestUsageReportRunCSVAndLines(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	opts, ios := w.options()
	opts.report.by, opts.report.breakdown, opts.report.csv = report.Day, "model", true
	if err := usageReportRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(text(ios.Out), "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "KIND,") || !strings.HasPrefix(lines[1], report.LinePeriod+",") ||
		!strings.HasPrefix(lines[2], report.LinePart+",") || !strings.HasPrefix(lines[4], report.LineTotal+",") {
		t.Errorf("--csv --breakdown model:\n%s", text(ios.Out))
	}
	if want := "1 model unpriced: mystery-model (tokens counted, cost unknown; add prices in config.toml [prices])\n"; text(ios.ErrOut) != want {
		t.Errorf("stderr %q, want %q", text(ios.ErrOut), want)
	}

	opts, ios = w.options()
	opts.report.by, opts.report.order = report.Session, "desc"
	if err := usageReportRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	rs := rows(text(ios.Out))
	if len(rs) != 3 || rs[0][0] != report.LinePeriod || rs[1][0] != report.LinePeriod || rs[2][0] != report.LineTotal {
		t.Errorf("session report off a terminal: %q", rs)
	}
	if rs[0][1] != w.webS.ID || rs[1][1] != w.apiS.ID {
		t.Errorf("--order desc lists the latest used first: %q", rs)
	}
}

// The report refuses, as usage errors, an order, locale or agent it does
// not know.
func TestUsageReportRunRefuses(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for name, edit := range map[string]func(*Options){
		"--order sideways":   func(o *Options) { o.report.order = "sideways" },
		"--locale klingon":   func(o *Options) { o.report.locale = "klingon" },
		"--agent claude-cod": func(o *Options) { o.report.agent = "claude-cod" },
		"--since soon":       func(o *Options) { o.report.since = "soon" },
		"--live --json":      func(o *Options) { o.report.live, o.JSON = true, true },
		"--live --until":     func(o *Options) { o.report.live, o.report.until = true, "2026-01-01" },
	} {
		opts, ios := w.options()
		opts.report.by = report.Day
		edit(opts)
		var usage *command.UsageError
		if err := usageReportRun(t.Context(), opts); !errors.As(err, &usage) {
			t.Errorf("%s: %v, want a usage error (exit 2)", name, err)
		}
		if text(ios.Out) != "" {
			t.Errorf("%s printed %q", name, text(ios.Out))
		}
	}
}
