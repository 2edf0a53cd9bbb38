package usage

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/insights"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// loom usage insights prints the figures of insights.Build: in JSON
// whole, on a terminal as a summary, a calendar and tables that fit its
// width; --project keeps this project's sessions.
func TestInsightsRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	call := loom.Part{Type: loom.PartTool, CallID: "c1", Name: "Bash", Status: loom.ToolError, Input: json.RawMessage(`{}`)}
	if err := w.st.Append(t.Context(), w.apiS, &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{call}, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	run := func(project bool, json bool, width int) string {
		t.Helper()
		opts, ios := w.options()
		opts.insights.top, opts.ThisProject, opts.JSON = insights.DefaultTop, project, json
		if err := opts.insights.check("local", time.Now()); err != nil {
			t.Fatal(err)
		}
		if width > 0 {
			ios.SetStdoutTTY(true)
			ios.SetWidth(width)
		}
		if err := insightsRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		return text(ios.Out)
	}
	var rep insights.Report
	if err := json.Unmarshal([]byte(run(false, true, 0)), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Days) != insights.DefaultDays || rep.Totals.Sessions != 2 || rep.Totals.Prompts != 2 || rep.Totals.ToolCalls != 1 ||
		rep.Totals.ToolErrors != 1 || rep.Totals.Tokens != 1_100_000+2300 || len(rep.Unpriced) != 1 || rep.Unpriced[0] != "mystery-model" ||
		len(rep.Costliest) != 2 || rep.Costliest[0].Title != "api work" || *rep.Costliest[0].CostUSD != 4.5 {
		t.Fatalf("JSON: %+v", rep)
	}
	if err := json.Unmarshal([]byte(run(true, true, 0)), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Sessions != 1 || len(rep.Projects) != 1 || rep.Projects[0].Name != "api" {
		t.Fatalf("--project: %+v", rep)
	}
	for _, width := range []int{40, 80} {
		out := ansi.Strip(run(false, false, width))
		for _, l := range strings.Split(out, "\n") {
			if ansi.StringWidth(l) > width {
				t.Errorf("a %d-cell line at %d columns: %q", ansi.StringWidth(l), width, l)
			}
		}
		for _, want := range []string{"2 sessions, 2 prompts, 2 replies, 1 tool call (100% failed)", "Prompts per day", "Bash", "api work", "$4.50", "unpriced", "mystery-model"} {
			if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
				t.Errorf("at %d columns, no %q:\n%s", width, want, out)
			}
		}
	}
}

// Its flags are checked before anything is read: a bad date or zone, a
// range that ends before it starts, --top below 1 are usage errors.
func TestInsightsFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--since", "yesterdayish"}, {"--tz", "Mars/Olympus"}, {"--since", "2026-03-02", "--until", "2026-03-01"}, {"--top", "0"}, {"extra"},
	} {
		cmdtest.Rejects(t, newCmdInsights, args...)
	}
	o := cmdtest.Options(t, newCmdInsights, "--since", "2026-03-01", "--until", "2026-03-31", "--tz", "UTC", "--project", "--top", "3")
	if f := o.insights; !f.from.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) || !f.to.Equal(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)) ||
		f.loc.String() != "UTC" || f.top != 3 || !o.ThisProject {
		t.Errorf("options %+v", f)
	}
}
