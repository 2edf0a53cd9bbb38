package usage

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/report"
)

// reportFlags are the flags of the reports by time of `loom usage`.
type reportFlags struct {
	by        string
	breakdown string
	since     string
	until     string
	tz        string
	agent     string
	csv       bool
	// compact and wide force the layout of a terminal's table.
	compact, wide bool
	// order is asc (oldest period first) or desc.
	order string
	// startOfWeek is the first day of a week (weekly reports).
	startOfWeek string
	// locale chooses how a table writes dates.
	locale string
	// noImport reports from the store as it is, without importing what
	// the agents wrote since the last import.
	noImport bool
	// live redraws the active block every interval, frames times (0:
	// until interrupted).
	live     bool
	interval time.Duration
	frames   int
}

func (r *reportFlags) add(cmd *cobra.Command, withBy bool) {
	fl := cmd.Flags()
	if withBy {
		fl.StringVar(&r.by, "by", "", "report by `day`, week, month, block (5-hour billing windows) or session")
	}
	fl.StringVar(&r.breakdown, "breakdown", "", "split each period by `model`, agent, project or member (with --team, member by default)")
	fl.StringVar(&r.since, "since", "", "from this `date` (2026-03-01, 20260301, RFC 3339, or an age like 7d)")
	fl.StringVar(&r.until, "until", "", "up to this `date`, that whole day included")
	fl.StringVar(&r.tz, "tz", "", "time `zone` days are cut in (IANA name such as Europe/Berlin, or UTC; default local)")
	fl.StringVar(&r.agent, "agent", "", "only sessions of this `surface`: cli, http, claude-code, codex, gemini, opencode, …")
	fl.BoolVar(&r.csv, "csv", false, "print CSV with a header")
	addLayout(cmd, &r.compact, &r.wide)
	order := "asc"
	if r.by == report.Session {
		order = "desc"
	}
	fl.StringVar(&r.order, "order", order, "`asc` lists the oldest period first, desc the newest")
	fl.StringVar(&r.startOfWeek, "start-of-week", "", "first `day` of a week: monday (default, ISO weeks) … sunday")
	fl.StringVar(&r.locale, "locale", "", "write a table's dates as this `locale` does: en-US 03/01/2026, de-DE 01.03.2026, … (default ISO 2026-03-01)")
	fl.BoolVar(&r.noImport, "no-import", false, "report from the store as it is, without importing what the agents wrote since the last import")
}

// addLayout adds --compact and --wide, which force a terminal table's
// layout; by default the cache and total columns are left out only when
// the table is wider than the terminal.
func addLayout(cmd *cobra.Command, compact, wide *bool) {
	fl := cmd.Flags()
	fl.BoolVar(compact, "compact", false, "leave out the cache and total columns, whatever the terminal's width")
	fl.BoolVar(wide, "wide", false, "show every column, even wider than the terminal")
}

// checkLayout refuses --compact with --wide.
func checkLayout(compact, wide bool) error {
	if compact && wide {
		return command.UsageErrorf("--compact and --wide cannot be used together")
	}
	return nil
}

// layout is the table layout --compact and --wide ask for.
func layout(compact, wide bool) term.Layout {
	switch {
	case compact:
		return term.LayoutCompact
	case wide:
		return term.LayoutWide
	}
	return term.LayoutAuto
}

// writeHidden says, under a table, which columns it left out and how to
// see them.
func writeHidden(ios *term.IOStreams, tp *term.Table) {
	if h := tp.Hidden(); len(h) > 0 && ios.IsStdoutTTY() {
		line := fmt.Sprintf("Left out at %d columns: %s; --wide shows them.", ios.TerminalWidth(), strings.ToLower(strings.Join(h, ", ")))
		// Wrapped, as the table, to the terminal's width.
		for _, l := range term.WrapWords(strings.Fields(line), " ", ios.TerminalWidth()) {
			fmt.Fprintln(ios.Out, ios.ColorScheme().Gray(l))
		}
	}
}

// indexes returns the positions of names in header, in the order of names.
func indexes(header []string, names ...string) []int {
	var out []int
	for _, n := range names {
		if i := slices.Index(header, n); i >= 0 {
			out = append(out, i)
		}
	}
	return out
}

// set reports whether any report flag was given, so that `loom usage`
// alone keeps printing its totals.
func (r *reportFlags) set() bool {
	return r.by != "" || r.breakdown != "" || r.since != "" || r.until != "" || r.tz != "" || r.agent != "" || r.csv ||
		r.order != "asc" || r.startOfWeek != "" || r.locale != ""
}

// newCmdUsageReport builds the report by time by of loom usage, the
// command name. runF, when not nil, is called with the options instead
// of running the command (for tests).
func newCmdUsageReport(inv *command.Invocation, name, by, short string, runF func(*Options) error) *cobra.Command {
	opts := newOptions(inv)
	rf := &opts.report
	rf.by = by
	cmd := &cobra.Command{
		Use:   name,
		Short: short,
		Long: short + `.

Costs are worked out now from each model's tokens and the price table
(the bundled prices and config.toml's [prices]); a model without a price
has its tokens counted and is named under the totals, its cost unknown
(null in --json), never $0. Days, weeks (ISO, from Monday, or from
--start-of-week) and months are cut in --tz, the local zone by default;
--locale writes a table's dates as a locale does (en-US 03/01/2026).
A report by session has one row per session, the latest used first.
With --team NAME the report is of the team's shared sessions, split by
member unless --breakdown says otherwise.
What the agents wrote since the last import is imported first
(--no-import skips it). To filter the JSON, pipe it to jq.`,
		Example: fmt.Sprintf(`  loom usage %[1]s
  loom usage %[1]s --since 7d --breakdown model
  loom usage %[1]s --agent claude-code --tz UTC --json
  loom usage %[1]s --project --csv > usage.csv
  loom usage %[1]s --json | jq '.rows[] | select(.cost_usd > 1)'
  loom usage %[1]s --team core --breakdown agent`, name),
		Args: command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if err := checkLayout(rf.compact, rf.wide); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return usageReportRun(cmd.Context(), opts)
		},
	}
	rf.add(cmd, false)
	cmd.Flags().BoolVarP(&opts.ThisProject, "project", "p", false, "only this project's sessions")
	if by == report.Block {
		cmd.Flags().BoolVar(&rf.live, "live", false, "redraw the active block every --interval until interrupted")
		cmd.Flags().BoolVarP(&rf.live, "watch", "w", false, "the same as --live")
		cmd.Flags().DurationVar(&rf.interval, "interval", 5*time.Second, "how often --live redraws")
		cmd.Flags().IntVar(&rf.frames, "frames", 0, "stop --live after this many redraws")
		_ = cmd.Flags().MarkHidden("frames")
		cmd.Example += "\n  loom usage blocks --live"
	}
	switch by {
	case report.Week:
		cmd.Example += "\n  loom usage weekly --start-of-week sunday --locale en-US"
	case report.Session:
		cmd.Example += "\n  loom usage session --since 20260301 --order asc"
	}
	inv.AddTeamFlag(cmd)
	return cmd
}

// reportInput reads the flags into a report's options and opens the
// store it is made from.
func reportInput(ctx context.Context, opts *Options) (report.Options, loom.Store, error) {
	rf := &opts.report
	req := report.Request{By: rf.by, Breakdown: rf.breakdown, Since: rf.since, Until: rf.until, TZ: rf.tz, Agent: rf.agent,
		StartOfWeek: rf.startOfWeek, Flags: true}
	o, err := req.Options(opts.User, time.Local, opts.Now())
	if err != nil {
		return o, nil, command.UsageErrorf("%v", err)
	}
	o.Agents = opts.Agents
	if opts.ThisProject {
		p, err := opts.Project()
		if err != nil {
			return o, nil, err
		}
		o.ProjectID = p.ID
	}
	if o.Prices, err = opts.PriceTable(); err != nil {
		return o, nil, err
	}
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return o, nil, err
	}
	o.Roots = st
	if opts.InTeam != nil && opts.InTeam() {
		// A team's report is by member unless another breakdown is asked.
		o.Member = report.Members(ctx, st)
		if o.Breakdown == "" {
			o.Breakdown = report.ByMember
		}
	}
	return o, st, nil
}

// agentUsage makes the error of a report of an agent loom does not know
// a usage error (--agent with a typo); others stay as they are.
func agentUsage(err error) error {
	if errors.Is(err, report.ErrUnknownAgent) {
		return command.UsageErrorf("--%s", err.Error())
	}
	return err
}

// usageReportRun is a report by time, as opts.report asks.
func usageReportRun(ctx context.Context, opts *Options) error {
	rf := &opts.report
	dates, err := reportDates(rf)
	if err != nil {
		return err
	}
	if rf.live {
		return usageLiveRun(ctx, opts)
	}
	looked := refresh(ctx, opts, rf.noImport)
	o, st, err := reportInput(ctx, opts)
	if err != nil {
		return err
	}
	rep, err := report.Build(ctx, st, o)
	if err != nil {
		return agentUsage(err)
	}
	if len(rep.Rows) == 0 {
		writeLooked(opts, looked)
	}
	if rf.order == "desc" {
		slices.Reverse(rep.Rows)
	}
	ios := opts.IO
	switch {
	case opts.JSON:
		return command.WriteJSON(ios.Out, rep)
	case rf.csv:
		return writeReportCSV(ios, rep)
	}
	if ios.IsStdoutTTY() && len(rep.Rows) == 0 {
		fmt.Fprint(ios.Out, rep.Text())
		return nil
	}
	return writeReportTable(ctx, opts, st, rep, dates)
}

// reportDates checks --order and --locale and returns the layout of
// the dates --locale asks for ("" for the default).
func reportDates(rf *reportFlags) (string, error) {
	if rf.order != "asc" && rf.order != "desc" {
		return "", command.UsageErrorf("--order %q: use asc or desc", rf.order)
	}
	if rf.locale == "" {
		return "", nil
	}
	l, ok := report.DateLayout(rf.locale)
	if !ok {
		return "", command.UsageErrorf("--locale %q: use a language tag such as en-US, en-GB, de-DE, fr-FR, ja-JP or iso", rf.locale)
	}
	return l, nil
}

// writeReportCSV writes a report by time as CSV, each line's kind
// first; the line of unpriced models goes to stderr.
func writeReportCSV(ios *term.IOStreams, rep *report.Report) error {
	t := rep.Cells(report.Format{})
	w := csv.NewWriter(ios.Out)
	_ = w.Write(append([]string{"KIND"}, t.Header...))
	for i, l := range t.Lines {
		_ = w.Write(append([]string{t.Kinds[i]}, l...))
	}
	w.Flush()
	if u := rep.UnpricedLine(); u != "" {
		fmt.Fprintln(ios.ErrOut, u)
	}
	return w.Error()
}

// writeReportTable writes a report by time as a table: laid out for a
// terminal, or tab-separated with each line's kind first when piped.
func writeReportTable(ctx context.Context, opts *Options, st loom.Store, rep *report.Report, dates string) error {
	ios := opts.IO
	rf := &opts.report
	tty := ios.IsStdoutTTY()
	cs := ios.ColorScheme()
	f := report.Format{Pretty: tty, Unknown: human.UnknownCost, ShortModels: tty, Dates: dates}
	if tty && rep.By == report.Session {
		ids := make([]string, len(rep.Rows))
		for i, r := range rep.Rows {
			ids[i] = r.Period
		}
		f.IDLen = opts.RefLen(ctx, st, ids)
	}
	t := rep.Cells(f)
	tp := term.NewTable(ios)
	tp.Header(t.Header...)
	// The compact layout keeps the period, the models, input, output
	// and cost; a block's rates and projection go after the caches.
	tp.Compact(indexes(t.Header, "TOTAL TOKENS", "CACHE WRITE", "CACHE READ", "TOKENS/H", "COST/H")...)
	tp.SetLayout(layout(rf.compact, rf.wide))
	// Models are cut by whole names ("opus-4-6 +1"), never inside one.
	tp.Lists(indexes(t.Header, "MODELS")...)
	if rep.By == report.Session {
		// Its models are cut before its title, down to the first
		// model's name, and left out where even then the row is too
		// wide (80 columns).
		tp.Flex(3, 1)
		tp.Drop(indexes(t.Header, "MODELS")...)
	} else {
		tp.Flex(1)
	}
	if rep.By == report.Block {
		// The active block's time left and projection stay; its input
		// and output go first on a narrow terminal.
		tp.Drop(indexes(t.Header, "INPUT", "OUTPUT")...)
	}
	for i, l := range t.Lines {
		for j, c := range l {
			color := reportColor(cs, t.Kinds[i], t.Header[j])
			if !tty {
				// Scripts get the kind of each line first.
				if j == 0 {
					tp.AddField(t.Kinds[i], nil)
				}
				color = nil
			}
			tp.AddField(c, color)
		}
		tp.EndRow()
	}
	if err := tp.Render(); err != nil {
		return err
	}
	writeHidden(ios, tp)
	if u := rep.UnpricedLine(); u != "" {
		if tty {
			for _, l := range term.WrapWords(strings.Fields(u), " ", ios.TerminalWidth()) {
				fmt.Fprintln(ios.Out, cs.Yellow(l))
			}
		} else {
			fmt.Fprintln(ios.ErrOut, u)
		}
	}
	return nil
}

// reportColor is the colour of a cell of a report by time on a
// terminal: totals bold, a line's parts gray, costs green.
func reportColor(cs *term.ColorScheme, kind, column string) func(string) string {
	switch {
	case kind == report.LineTotal:
		return cs.Bold
	case kind == report.LinePart:
		return cs.Gray
	case column == "COST":
		return cs.Green
	}
	return nil
}
