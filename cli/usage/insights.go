package usage

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/insights"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/report"
)

// insightFlags are loom usage insights' own flags.
type insightFlags struct {
	since, until, tz string
	top              int
	noImport         bool
	// from, to and loc are since, until and tz read (check).
	from, to time.Time
	loc      *time.Location
}

// check reads --since, --until and --tz as the reports by time do.
func (f *insightFlags) check(user string, now time.Time) error {
	if f.top < 1 {
		return command.UsageErrorf("--top must be 1 or more")
	}
	ro, err := report.Request{By: report.Day, Since: f.since, Until: f.until, TZ: f.tz, Flags: true}.Options(user, time.Local, now)
	if err != nil {
		return command.UsageErrorf("%v", err)
	}
	f.from, f.to, f.loc = ro.Since, ro.Until, ro.Location
	return nil
}

// newCmdInsights builds loom usage insights. runF, when not nil, is
// called with the options instead of running the command (for tests).
func newCmdInsights(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := newOptions(inv)
	f := &opts.insights
	cmd := &cobra.Command{
		Use:   "insights",
		Short: "Show how you work with agents: activity per day, tools, models, agents, projects, sessions",
		Long: `Show the insights of your sessions over a range of days (the last 90
by default): a calendar of the prompts you wrote each day; sessions,
prompts, model replies, tokens and cost per day; tool calls by tool with
the share that failed; tokens and cost by model, by agent and by
project; how long sessions ran from the first prompt to the last reply;
the longest and the costliest sessions.

A fork's inherited history is counted once, in the session it was
made in; sessions in the trash are left out. Costs are worked out as in
every usage report, from the price table. The dashboard's insights page
(loom serve) shows the same figures, drawn. What the agents wrote since
the last import is imported first (--no-import skips it).`,
		Example: `  loom usage insights
  loom usage insights --since 30d --project
  loom usage insights --since 2026-01-01 --until 2026-03-31 --tz UTC
  loom usage insights --json | jq '.tools[] | select(.failure_rate > 0.1)'`,
		Args: command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if err := f.check(opts.User, opts.Now()); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return insightsRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.since, "since", "", "from this `date` (2026-03-01, 20260301, or an age like 30d; default 90 days ago)")
	fl.StringVar(&f.until, "until", "", "up to this `date`, that whole day included (default today)")
	fl.StringVar(&f.tz, "tz", "", "time `zone` days are cut in (IANA name such as Europe/Berlin, or UTC; default local)")
	fl.BoolVarP(&opts.ThisProject, "project", "p", false, "only this project's sessions")
	fl.IntVar(&f.top, "top", insights.DefaultTop, "how many of the longest and costliest sessions to list")
	fl.BoolVar(&f.noImport, "no-import", false, "report from the store as it is, without importing what the agents wrote since the last import")
	return cmd
}

// insightsInput reads the flags into insights' options.
func insightsInput(opts *Options) (insights.Options, error) {
	f := &opts.insights
	o := insights.Options{UserID: opts.User, Since: f.from, Until: f.to, Location: f.loc, Now: opts.Now(), Top: f.top}
	if opts.ThisProject {
		p, err := opts.Project()
		if err != nil {
			return o, err
		}
		o.ProjectID = p.ID
	}
	var err error
	if o.Prices, err = opts.PriceTable(); err != nil {
		return o, err
	}
	return o, nil
}

func insightsRun(ctx context.Context, opts *Options) error {
	looked := refresh(ctx, opts, opts.insights.noImport)
	o, err := insightsInput(opts)
	if err != nil {
		return err
	}
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return err
	}
	src, err := insights.Of(st)
	if err != nil {
		return err
	}
	o.Roots = st
	rep, err := insights.Build(ctx, src, o)
	if err != nil {
		return err
	}
	if rep.Totals.ActiveDays == 0 {
		writeLooked(opts, looked)
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, rep)
	}
	var ids []string
	for _, s := range append(slices.Clone(rep.Longest), rep.Costliest...) {
		ids = append(ids, s.ID)
	}
	return writeInsights(opts.IO, rep, opts.RefLen(ctx, st, ids))
}

// writeInsights prints a report: a summary, a calendar, and tables that
// fit the terminal (80 columns when it is no terminal).
// Sessions are named by the first refLen characters of their ids.
func writeInsights(ios *term.IOStreams, rep *insights.Report, refLen int) error {
	out := ios.Out
	cs := ios.ColorScheme()
	width := ios.TerminalWidth()
	if !writeInsightsSummary(out, rep, width) {
		return nil
	}

	fmt.Fprintln(out)
	fmt.Fprintln(out, cs.Bold("Prompts per day"))
	writeCalendar(out, rep.Days, width)

	if err := writeToolsTable(ios, rep.Tools); err != nil {
		return err
	}
	if err := writeShareTables(ios, rep); err != nil {
		return err
	}
	if err := writeSessionTables(ios, rep, refLen); err != nil {
		return err
	}
	if len(rep.Unpriced) > 0 {
		fmt.Fprintln(out)
		writeWrapped(out, width, fmt.Sprintf("Unpriced, their tokens counted and cost unknown: %s (config.toml [prices] can price them).", strings.Join(rep.Unpriced, ", ")))
	}
	return nil
}

// writeWrapped prints s wrapped between its words at width.
func writeWrapped(out io.Writer, width int, s string) {
	for _, l := range term.WrapWords(strings.Fields(s), " ", width) {
		fmt.Fprintln(out, l)
	}
}

// writeInsightsSummary prints the lines above the calendar: the window
// and its active days, then the totals and how long sessions ran. It
// reports false when no day was active, and only the first line is
// printed.
func writeInsightsSummary(out io.Writer, rep *insights.Report, width int) bool {
	t := rep.Totals
	writeWrapped(out, width, fmt.Sprintf("Insights from %s to %s (%s): %s active of %s.", rep.Since, rep.Until, rep.TZ,
		human.Plural(t.ActiveDays, "day"), human.Plural(len(rep.Days), "day")))
	if t.ActiveDays == 0 {
		return false
	}
	failed := ""
	if t.ToolCalls > 0 {
		failed = fmt.Sprintf(" (%s failed)", human.Percent(float64(t.ToolErrors)/float64(t.ToolCalls)))
	}
	writeWrapped(out, width, fmt.Sprintf("%s, %s, %s, %s%s; %s tokens, %s.",
		human.Plural(int(t.Sessions), "session"), human.Plural(int(t.Prompts), "prompt"), replies(t.Replies),
		human.Plural(int(t.ToolCalls), "tool call"), failed, human.Count(t.Tokens), costText(t.CostUSD)))
	if d := rep.Durations; d.Sessions > 0 {
		writeWrapped(out, width, fmt.Sprintf("From the first prompt to the last reply, a session ran %s at the median, %s at the 90th percentile, %s at the longest.",
			human.Span(d.MedianSeconds), human.Span(d.P90Seconds), human.Span(d.LongestSeconds)))
	}
	return true
}

// writeInsightsTitle prints the blank line and bold title above a table
// of insights.
func writeInsightsTitle(ios *term.IOStreams, title string) {
	fmt.Fprintln(ios.Out)
	fmt.Fprintln(ios.Out, ios.ColorScheme().Bold(title))
}

// writeToolsTable prints the table of the 15 most called tools, and how
// many more there are; nothing when no tool was called.
func writeToolsTable(ios *term.IOStreams, tools []insights.Tool) error {
	if len(tools) == 0 {
		return nil
	}
	writeInsightsTitle(ios, "Tools")
	tp := term.NewTable(ios)
	tp.Header("TOOL", "CALLS", "FAILED", "RATE")
	tp.Flex(0)
	tp.Drop(2)
	for _, x := range tools[:min(len(tools), 15)] {
		for _, c := range []string{x.Name, human.Count(x.Calls), human.Count(x.Errors), human.Percent(x.FailureRate)} {
			tp.AddField(c, nil)
		}
		tp.EndRow()
	}
	if err := tp.Render(); err != nil {
		return err
	}
	if n := len(tools) - 15; n > 0 {
		fmt.Fprintln(ios.Out, ios.ColorScheme().Gray(fmt.Sprintf("and %s more (--json lists them all)", human.Plural(n, "tool"))))
	}
	return nil
}

// writeShareTables prints the tables of the shares of models, agents
// and projects, the first 10 of each.
func writeShareTables(ios *term.IOStreams, rep *insights.Report) error {
	for _, m := range []struct {
		title, column string
		list          []insights.Share
	}{{"Models", "MODEL", rep.Models}, {"Agents", "AGENT", rep.Agents}, {"Projects", "PROJECT", rep.Projects}} {
		if len(m.list) == 0 {
			continue
		}
		writeInsightsTitle(ios, m.title)
		tp := term.NewTable(ios)
		tp.Header(m.column, "REPLIES", "TOKENS", "SHARE", "COST")
		tp.Flex(0)
		tp.Drop(1, 3)
		for _, s := range m.list[:min(len(m.list), 10)] {
			name := s.Name
			if name == "" {
				name = "(none)"
			}
			for _, c := range []string{name, human.Count(s.Replies), human.Count(s.Tokens), human.Percent(s.TokenShare), costText(s.CostUSD)} {
				tp.AddField(c, nil)
			}
			tp.EndRow()
		}
		if err := tp.Render(); err != nil {
			return err
		}
	}
	return nil
}

// writeSessionTables prints the tables of the longest and the costliest
// sessions, named by the first refLen characters of their ids.
func writeSessionTables(ios *term.IOStreams, rep *insights.Report, refLen int) error {
	for _, l := range []struct {
		title string
		list  []insights.Session
		drop  []int
	}{{"Longest sessions", rep.Longest, []int{4, 2, 5}}, {"Costliest sessions", rep.Costliest, []int{4, 2, 3}}} {
		if len(l.list) == 0 {
			continue
		}
		writeInsightsTitle(ios, l.title)
		tp := term.NewTable(ios)
		tp.Header("SESSION", "TITLE", "AGENT", "RAN", "PROMPTS", "COST")
		tp.Flex(1, 2)
		tp.Drop(l.drop...)
		for _, s := range l.list {
			for _, c := range []string{s.ID[:min(refLen, len(s.ID))], human.OneLine(s.Title), s.Agent, human.Span(s.DurationSeconds), human.Count(s.Prompts), costText(s.CostUSD)} {
				tp.AddField(c, nil)
			}
			tp.EndRow()
		}
		if err := tp.Render(); err != nil {
			return err
		}
	}
	return nil
}

// writeCalendar prints the days as a calendar: a row per weekday from
// Monday, a column per week, each day a shade of its prompts (its
// quartile among the active days), as many of the last weeks as fit.
func writeCalendar(out io.Writer, days []insights.Day, width int) {
	if len(days) == 0 {
		return
	}
	first, err := time.Parse(time.DateOnly, days[0].Date)
	if err != nil {
		return
	}
	lead := (int(first.Weekday()) + 6) % 7 // days before the first, from Monday
	weeks := (lead + len(days) + 6) / 7
	const label = 4
	if most := width - label; weeks > most {
		// The last weeks that fit; the first column starts on a Monday.
		skip := (weeks - most) * 7
		days = days[skip-lead:]
		lead, weeks = 0, most
		fmt.Fprintf(out, "%-*s%s\n", label, "", fmt.Sprintf("the last %d weeks, from %s", weeks, days[0].Date))
	}
	var counts []int64
	for _, d := range days {
		if d.Prompts > 0 {
			counts = append(counts, d.Prompts)
		}
	}
	shade := shades(counts)
	grid := make([][]rune, 7)
	for i := range grid {
		grid[i] = []rune(strings.Repeat(" ", weeks))
	}
	for i, d := range days {
		at := lead + i
		grid[at%7][at/7] = shade(d.Prompts)
	}
	for i, name := range []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"} {
		fmt.Fprintf(out, "%-*s%s\n", label, name, strings.TrimRight(string(grid[i]), " "))
	}
	for _, l := range term.WrapWords(strings.Fields("· none, ░ ▒ ▓ █ more, by quartile of the active days"), " ", width-label) {
		fmt.Fprintf(out, "%-*s%s\n", label, "", l)
	}
}

// shades returns the shade of a day's prompts among counts: · for none,
// then ░ ▒ ▓ █ by quartile.
func shades(counts []int64) func(int64) rune {
	sorted := slices.Sorted(slices.Values(counts))
	q := func(f float64) int64 {
		if len(sorted) == 0 {
			return 0
		}
		return sorted[int(math.Ceil(f*float64(len(sorted))))-1]
	}
	q1, q2, q3 := q(0.25), q(0.5), q(0.75)
	return func(n int64) rune {
		switch {
		case n <= 0:
			return '·'
		case n <= q1:
			return '░'
		case n <= q2:
			return '▒'
		case n <= q3:
			return '▓'
		}
		return '█'
	}
}

// replies writes a count of replies.
func replies(n int64) string {
	if n == 1 {
		return "1 reply"
	}
	return human.Count(n) + " replies"
}

// costText writes a cost, or says it is unknown.
func costText(c *float64) string {
	if c == nil {
		return "unpriced"
	}
	return human.Cost(*c)
}
