// Package usage is loom usage: token and cost totals of the user's
// sessions, and the reports by time (daily, weekly, monthly, blocks;
// --live).
package usage

import (
	"context"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/doctor"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/report"
)

// Options are the options of `loom usage` and its reports by time.
type Options struct {
	IO *term.IOStreams
	// ReadStore opens the store to read.
	ReadStore func(context.Context) (loom.Engine, error)
	// Resolve finds the session a reference names.
	Resolve func(ctx context.Context, st loom.Reader, ref string) (*loom.Session, error)
	// Project is the working directory's project (--project).
	Project func() (loom.Project, error)
	// PriceTable prices the reports by time.
	PriceTable func() (*pricing.Table, error)
	// RefLen is how much of ids a terminal shows.
	RefLen func(ctx context.Context, st loom.Store, ids []string) int
	Now    func() time.Time
	User   string
	JSON   bool
	// Agents are the agents loom imports, which --agent may name.
	Agents []string
	// ImportAgents brings in what the agents wrote since the last
	// import, before a report.
	ImportAgents func(context.Context) (*importer.Report, error)
	// ImportFile brings in one session file of an agent (the status
	// line's session).
	ImportFile func(ctx context.Context, tool, path string) (*importer.Report, error)
	// Warning is what the status line adds when it matters (sessions
	// another agent will soon delete that loom does not hold); "" when
	// nothing is to be said.
	Warning func(ctx context.Context) string

	Ref string
	// InTeam reports whether --team made the store a team's: the report
	// then also sums usage by member (each session's key names its
	// author).
	InTeam func() bool
	// ThisProject is --project: only this project's sessions.
	ThisProject bool
	Limit       int
	// report are the flags of a report by time: loom usage's, or those
	// of the report command run.
	report reportFlags
	// prices are loom usage prices' flags.
	prices priceFlags
	// insights are loom usage insights' flags.
	insights insightFlags
	// Dirs are loom's directories (the fetched price list's).
	Dirs func() (paths.Dirs, error)
}

// newOptions are the options every usage command starts from.
func newOptions(inv *command.Invocation) *Options {
	opts := &Options{
		IO:         inv.IO,
		ReadStore:  inv.ReadStore,
		Resolve:    inv.Scope().Resolve,
		Project:    inv.Project,
		PriceTable: inv.PriceTable,
		RefLen:     inv.Scope().RefLen,
		Now:        inv.TimeNow,

		ImportAgents: func(ctx context.Context) (*importer.Report, error) { return command.ImportAgents(ctx, inv) },
		InTeam:       inv.InTeam,
		ImportFile: func(ctx context.Context, tool, path string) (*importer.Report, error) {
			return command.ImportFile(ctx, inv, tool, path)
		},
		Warning: func(ctx context.Context) string {
			return doctor.NewWarner(inv).Short(ctx, statusWarningBudget)
		},
	}
	for _, fm := range inv.Formats {
		opts.Agents = append(opts.Agents, fm.Tool())
	}
	return opts
}

// NewCmdUsage builds loom usage and its reports by time. runF, when not
// nil, is called with the options instead of running the command (for
// tests).
func NewCmdUsage(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := newOptions(inv)
	cmd := &cobra.Command{
		Use:   "usage [REF]",
		Short: "Show token and cost totals, per session, project, surface and model, or over time",
		Long: `Show token and cost totals of your sessions: overall, per session (the
costliest first), per project, per surface (cli, http, or the agent an
imported session came from) and per model. With REF, of that session
alone; with --project, of this project's sessions.

Every report first imports what the agents (Claude Code, Codex, Gemini
CLI, …) wrote since the last import, as loom session import --from all
does, and says so in one line; --no-import reports the store as it is.

--limit bounds the per-session table of the text output; --json prints
the whole report.

Over time: loom usage daily, weekly, monthly and blocks (5-hour billing
windows), or --by day|week|month|block, each with --breakdown
model|agent|project, --since, --until, --tz, --agent and --csv.`,
		Example: `  loom usage
  loom usage --project
  loom usage 0196a3b2
  loom usage --json | jq '.total.cost_usd'
  loom usage daily --since 7d --breakdown model
  loom usage monthly --agent claude-code --csv
  loom usage blocks --tz UTC
  loom usage insights --since 30d`,
		Args: command.ArgsBetween(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Ref = args[0]
			}
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if err := checkLayout(opts.report.compact, opts.report.wide); err != nil {
				return err
			}
			if opts.Limit < 0 {
				return command.UsageErrorf("--limit must be 0 (no limit) or more")
			}
			if opts.report.set() && opts.Ref != "" {
				return command.UsageErrorf("a report by time covers sessions by --project and --agent, not one REF")
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.report.set() {
				return usageReportRun(cmd.Context(), opts)
			}
			return usageRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.ThisProject, "project", "p", false, "only this project's sessions")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "L", 10, "most sessions to list (0: all)")
	opts.report.add(cmd, true)
	for _, c := range []struct{ name, by, short string }{
		{"daily", "day", "Show usage and cost per day"},
		{"weekly", "week", "Show usage and cost per week (ISO weeks, from Monday)"},
		{"monthly", "month", "Show usage and cost per month"},
		{"blocks", "block", "Show usage per 5-hour billing block, with burn rate and the active block's projection"},
		{"session", "session", "Show usage and cost per session, the latest used first"},
	} {
		cmd.AddCommand(newCmdUsageReport(inv, c.name, c.by, c.short, nil))
	}
	cmd.AddCommand(newCmdStatusline(inv, nil), newCmdPrices(inv, nil), newCmdInsights(inv, nil))
	inv.AddTeamFlag(cmd)
	return cmd
}

func usageRun(ctx context.Context, opts *Options) error {
	looked := refresh(ctx, opts, opts.report.noImport)
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return err
	}
	filter, err := usageFilter(ctx, opts, st)
	if err != nil {
		return err
	}
	rep, err := st.Usage(ctx, filter)
	if err != nil {
		return err
	}
	labelProjects(ctx, st, opts.User, rep.ByProject)
	prices, err := opts.PriceTable()
	if err != nil {
		return err
	}
	if err := reprice(ctx, st, rep, filter, prices); err != nil {
		return err
	}
	var byMember []loom.UsageRow
	team := opts.InTeam != nil && opts.InTeam()
	if team {
		if byMember, err = usageByMember(ctx, st, rep.BySession); err != nil {
			return err
		}
	}
	if opts.JSON {
		return writeUsageJSON(opts.IO, rep, byMember, team)
	}
	if len(rep.BySession) == 0 {
		writeLooked(opts, looked)
	}
	writeUsageTotal(opts, rep)
	for _, s := range []struct {
		name  string
		rows  []loom.UsageRow
		limit int
	}{
		{"SESSION", rep.BySession, opts.Limit},
		{"PROJECT", rep.ByProject, 0},
		{"MEMBER", byMember, 0},
		{"SURFACE", rep.BySurface, 0},
		{"MODEL", rep.ByModel, 0},
	} {
		if err := writeUsageSection(ctx, opts, st, s.name, s.rows, s.limit); err != nil {
			return err
		}
	}
	return nil
}

// usageFilter is the filter of loom usage's options: the user's
// sessions, REF's alone, or with --project this project's.
func usageFilter(ctx context.Context, opts *Options, st loom.Store) (loom.UsageFilter, error) {
	filter := loom.UsageFilter{UserID: opts.User}
	if opts.Ref != "" {
		s, err := opts.Resolve(ctx, st, opts.Ref)
		if err != nil {
			return filter, err
		}
		filter.SessionID = s.ID
	}
	if opts.ThisProject {
		p, err := opts.Project()
		if err != nil {
			return filter, err
		}
		filter.ProjectID = p.ID
	}
	return filter, nil
}

// reprice sets the costs of rep to what its tokens cost at prices, as
// the reports by time work them out (per model, quarter hour and
// long-context flag, a cost the source recorded for a model without a
// price), so that loom usage and loom usage daily agree after a price
// changes. The rows are sorted again, the costliest first.
func reprice(ctx context.Context, st loom.Store, rep *loom.UsageReport, f loom.UsageFilter, prices *pricing.Table) error {
	slices, err := st.UsageSlices(ctx, loom.UsageSliceFilter{UserID: f.UserID, ProjectID: f.ProjectID, SessionID: f.SessionID,
		BySession: true, LongContext: pricing.LongContextTokens})
	if err != nil {
		return err
	}
	session, project, surface, model := map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]float64{}
	total := 0.0
	for _, s := range slices {
		cost, priced := prices.Cost(s.Provider, s.Model, s.Usage, s.LongContext)
		if !priced {
			cost = s.Usage.CostUSD
		}
		session[s.SessionID] += cost
		project[s.ProjectID] += cost
		surface[s.Surface] += cost
		model[s.Provider+":"+s.Model] += cost
		total += cost
	}
	for _, g := range []struct {
		rows []loom.UsageRow
		cost map[string]float64
	}{{rep.BySession, session}, {rep.ByProject, project}, {rep.BySurface, surface}, {rep.ByModel, model}} {
		for i := range g.rows {
			g.rows[i].Usage.CostUSD = loom.RoundCost(g.cost[g.rows[i].Key])
		}
		sort.SliceStable(g.rows, func(i, j int) bool { return g.rows[i].Usage.CostUSD > g.rows[j].Usage.CostUSD })
	}
	rep.Total.CostUSD = loom.RoundCost(total)
	return nil
}

// plainCost writes a cost for scripts: no currency sign, and no digits
// past a millionth of a dollar, where sums of floats only add noise; an
// unknown cost (human.CostKnown) as human.UnknownCost, never as 0.
func plainCost(u loom.Usage) string {
	if !human.CostKnown(u) {
		return human.UnknownCost
	}
	return strconv.FormatFloat(math.Round(u.CostUSD*1e6)/1e6, 'f', -1, 64)
}

// usageByMember sums a team's sessions' usage by the member of each
// (Session.Member), most costly first.
func usageByMember(ctx context.Context, st loom.Store, sessions []loom.UsageRow) ([]loom.UsageRow, error) {
	by := map[string]*loom.UsageRow{}
	var order []string
	for _, r := range sessions {
		s, err := st.Session(ctx, r.Key)
		if err != nil {
			return nil, err
		}
		m := s.Member
		if m == "" {
			m = "?"
		}
		row := by[m]
		if row == nil {
			row = &loom.UsageRow{Group: "member", Key: m, Name: m}
			by[m] = row
			order = append(order, m)
		}
		row.Sessions += r.Sessions
		row.Messages += r.Messages
		row.Usage.Add(r.Usage)
	}
	out := make([]loom.UsageRow, 0, len(order))
	for _, m := range order {
		out = append(out, *by[m])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Usage.CostUSD > out[j].Usage.CostUSD })
	return out, nil
}

// labelProjects names the projects of rows as every listing of them
// does (report.ProjectLabels): apart where several share a name, told
// by roots, and the sessions of no project as such, not by their
// agent.
func labelProjects(ctx context.Context, roots report.Rooter, user string, rows []loom.UsageRow) {
	refs := make([]report.ProjectRef, len(rows))
	for i, r := range rows {
		refs[i] = report.ProjectRef{ID: r.Key, Name: r.Name}
	}
	labels := report.ProjectLabels(ctx, roots, user, refs)
	for i := range rows {
		rows[i].Name = labels[rows[i].Key]
	}
}
