// Package report makes usage reports over time: usage and cost per day,
// week, month or 5-hour block, optionally broken down by model, agent or
// project. The command line, the HTTP API, the dashboard and the MCP
// tool all make theirs with Build, so they agree to the token and the
// cent.
//
// Costs are worked out when a report is made, from each model's tokens
// and the price table in use (the bundled prices and config.toml's), so
// a price added or corrected today reprices the whole history. A model
// without a price has its tokens counted and its cost left unknown
// (null in JSON), never zero.
package report

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/pricing"
)

// Periods a report can be made by.
const (
	Day   = "day"
	Week  = "week"
	Month = "month"
	Block = "block"
	// Session makes one row per session, its period the session's id.
	Session = "session"
)

// Breakdowns a report's rows can be split by.
const (
	ByModel   = "model"
	ByAgent   = "agent"
	ByProject = "project"
	// ByMember splits a team's report by the member whose sessions they
	// are (Options.Member names them).
	ByMember = "member"
)

// BlockLength is the length of a billing block: subscription plans
// count usage in windows of five hours from the first request.
const BlockLength = 5 * time.Hour

// Options say what a report covers and how it is cut.
type Options struct {
	UserID    string
	ProjectID string
	// Agent keeps the sessions of one surface: cli, http, or the agent
	// an imported session came from (claude-code, codex, …).
	Agent string
	// Agents are the surfaces Agent may name beside those of the
	// store's sessions: the agents loom imports. A name that is none of
	// them, whose report is empty, is an error listing them.
	Agents []string
	// By is Day, Week, Month, Block or Session.
	By string
	// WeekStart is the first day of a week; nil is Monday, as ISO
	// weeks start (see StartOfWeek).
	WeekStart *time.Weekday
	// Breakdown is "", ByModel, ByAgent, ByProject or ByMember.
	Breakdown string
	// Member names the member whose session sessionID is, in a team's
	// report (ByMember needs it): Members of the team's store.
	Member func(sessionID string) string
	// Since and Until bound the messages counted: [Since, Until).
	Since, Until time.Time
	// Location is the time zone days, weeks and months are cut in
	// (time.Local when nil).
	Location *time.Location
	// Prices is the price table (the bundled one when nil).
	Prices *pricing.Table
	// Now decides which block is active (time.Now when zero).
	Now time.Time
	// Roots says where a project's sessions ran, which tells apart
	// the projects of one name in a ByProject breakdown
	// (ProjectLabels): the engine's edit index. Nil tells them apart
	// by id.
	Roots Rooter
}

// Check reports whether By and Breakdown name what a report can do.
func (o Options) Check() error {
	switch o.By {
	case Day, Week, Month, Block, Session:
	default:
		return loom.Errorf(loom.EINVALID, "unknown period %q: use day, week, month, block or session", o.By)
	}
	switch o.Breakdown {
	case "", ByModel, ByAgent, ByProject, ByMember:
	default:
		return loom.Errorf(loom.EINVALID, "unknown breakdown %q: use model, agent, project or member", o.Breakdown)
	}
	if !o.Since.IsZero() && !o.Until.IsZero() && !o.Until.After(o.Since) {
		return loom.Errorf(loom.EINVALID, "--until must be after --since")
	}
	return nil
}

// Totals are the tokens and cost of a row, a part of one, or a report.
type Totals struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	ReasoningTokens  int64 `json:"reasoning_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	// CacheWrite1hTokens are the part of CacheWriteTokens written to a
	// cache kept for an hour, priced at its own rate.
	CacheWrite1hTokens int64 `json:"cache_write_1h_tokens,omitempty"`
	// TotalTokens is input, output, cache-read and cache-write tokens
	// (reasoning tokens are part of the output).
	TotalTokens int64 `json:"total_tokens"`
	// CostUSD is the cost of the priced models' tokens; nil when none
	// of the tokens is priced.
	CostUSD  *float64 `json:"cost_usd"`
	Messages int64    `json:"messages"`
	// Unpriced names the models whose tokens are counted here without
	// a cost.
	Unpriced []string `json:"unpriced_models,omitempty"`
}

// Cost is CostUSD, or 0 when it is unknown.
func (t Totals) Cost() float64 {
	if t.CostUSD == nil {
		return 0
	}
	return *t.CostUSD
}

func (t *Totals) add(u loom.Usage, messages int64, cost float64, priced bool, model string) {
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.ReasoningTokens += u.ReasoningTokens
	t.CacheReadTokens += u.CacheReadTokens
	t.CacheWriteTokens += u.CacheWriteTokens
	t.CacheWrite1hTokens += u.CacheWrite1hTokens
	t.TotalTokens += u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
	t.Messages += messages
	if priced {
		c := cost
		if t.CostUSD != nil {
			c += *t.CostUSD
		}
		t.CostUSD = &c
	} else if i := sort.SearchStrings(t.Unpriced, model); i == len(t.Unpriced) || t.Unpriced[i] != model {
		t.Unpriced = append(t.Unpriced, "")
		copy(t.Unpriced[i+1:], t.Unpriced[i:])
		t.Unpriced[i] = model
	}
}

// round rounds the cost to a billionth of a dollar, as loom.RoundCost.
func (t *Totals) round() {
	if t.CostUSD != nil {
		c := loom.RoundCost(*t.CostUSD)
		t.CostUSD = &c
	}
}

// Part is one model's, agent's, project's or member's share of a row.
type Part struct {
	// Key is provider:model, the surface, the project id or the
	// member's name.
	Key  string `json:"key"`
	Name string `json:"name"`
	Totals
}

// Row is the usage of one period.
type Row struct {
	// Period names it: 2026-03-01, 2026-W09 (a week from Monday; a
	// week from another day is named by its first day, 2026-03-01),
	// 2026-03, a block's start in the report's time zone (2026-03-01
	// 14:00), or a session's id.
	Period string `json:"period"`
	// Title is the session's title in a report by session.
	Title string    `json:"title,omitempty"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Totals
	// Models are the models used in it.
	Models    []string `json:"models"`
	Breakdown []Part   `json:"breakdown,omitempty"`
	// Block is set in a report by block.
	Block *BlockInfo `json:"block,omitempty"`
}

// BlockInfo is what a row of a report by block adds: when it was used,
// how fast, and for the active block, where it is heading.
type BlockInfo struct {
	// Active is whether the block is the current one: it has not
	// ended and its last message is less than BlockLength ago.
	Active bool `json:"active"`
	// First and Last are the times of its first and last message.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
	// TokensPerHour and CostPerHour are its burn rate: its usage over
	// the time from its first message to its last (an hour at least).
	TokensPerHour float64  `json:"tokens_per_hour"`
	CostPerHour   *float64 `json:"cost_per_hour"`
	// ProjectedTokens and ProjectedCostUSD are, for the active block,
	// its usage at its end if the burn rate holds.
	ProjectedTokens  int64    `json:"projected_tokens,omitempty"`
	ProjectedCostUSD *float64 `json:"projected_cost_usd,omitempty"`
	// Remaining is the time left until its end, for the active block.
	RemainingMinutes int64 `json:"remaining_minutes,omitempty"`
}

// Report is usage over time.
type Report struct {
	By        string    `json:"by"`
	Breakdown string    `json:"breakdown,omitempty"`
	TZ        string    `json:"tz"`
	Since     time.Time `json:"since,omitzero"`
	Until     time.Time `json:"until,omitzero"`
	// Rows are the periods with usage, oldest first.
	Rows  []Row  `json:"rows"`
	Total Totals `json:"total"`
	// PricesAsOf is the day the prices of the price list were taken
	// (the bundled snapshot's, or a fetched list's).
	PricesAsOf string `json:"prices_as_of"`
}

// Share is one part of a report's breakdown (a model's, agent's,
// project's or member's) summed over all of its rows.
type Share struct {
	Key      string
	Name     string
	Messages int64
	Tokens   int64
	// CostUSD is nil when none of the part's tokens is priced.
	CostUSD *float64
}

// Shares sums each part of the rows' breakdowns over the whole report,
// costliest first, by tokens where costs tie, then by key.
func (r *Report) Shares() []Share {
	at := map[string]int{}
	var out []Share
	for _, row := range r.Rows {
		for _, p := range row.Breakdown {
			i, ok := at[p.Key]
			if !ok {
				i = len(out)
				at[p.Key] = i
				out = append(out, Share{Key: p.Key, Name: p.Name})
			}
			s := &out[i]
			s.Messages += p.Messages
			s.Tokens += p.TotalTokens
			if p.CostUSD != nil {
				c := loom.RoundCost(s.cost() + *p.CostUSD)
				s.CostUSD = &c
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Share) int {
		return cmp.Or(-cmp.Compare(a.cost(), b.cost()), -cmp.Compare(a.Tokens, b.Tokens), cmp.Compare(a.Key, b.Key))
	})
	return out
}

func (s Share) cost() float64 {
	if s.CostUSD == nil {
		return 0
	}
	return *s.CostUSD
}

// Active returns the active block of a report by block, nil when there
// is none.
func (r *Report) Active() *Row {
	for i := range r.Rows {
		if b := r.Rows[i].Block; b != nil && b.Active {
			return &r.Rows[i]
		}
	}
	return nil
}

// Slicer is what Build reads usage from: a loom.Store. Its slices make
// the rows; its usage by session names the sessions of a report by
// session (their titles).
type Slicer interface {
	UsageSlices(ctx context.Context, f loom.UsageSliceFilter) ([]loom.UsageSlice, error)
	Usage(ctx context.Context, f loom.UsageFilter) (*loom.UsageReport, error)
}

// Cached returns st reading usage slices once per filter: the reports
// one page or command makes from the same slices read them once.
func Cached(st Slicer) Slicer { return &cached{st: st} }

type cached struct {
	st    Slicer
	cache map[loom.UsageSliceFilter][]loom.UsageSlice
}

// Usage names sessions as the store does: it is read once per report
// by session.
func (c *cached) Usage(ctx context.Context, f loom.UsageFilter) (*loom.UsageReport, error) {
	return c.st.Usage(ctx, f)
}

func (c *cached) UsageSlices(ctx context.Context, f loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	if got, ok := c.cache[f]; ok {
		return got, nil
	}
	got, err := c.st.UsageSlices(ctx, f)
	if err != nil {
		return nil, err
	}
	if c.cache == nil {
		c.cache = map[loom.UsageSliceFilter][]loom.UsageSlice{}
	}
	c.cache[f] = got
	return got, nil
}

// knownAgent reports, for a report of o.Agent that came out empty,
// whether the name is a surface of the user's sessions or one of
// o.Agents; an unknown one (a typo) is EINVALID, listing the known.
func knownAgent(ctx context.Context, st Slicer, o Options) error {
	all, err := st.UsageSlices(ctx, loom.UsageSliceFilter{UserID: o.UserID, LongContext: pricing.LongContextTokens})
	if err != nil {
		return err
	}
	known := map[string]bool{loom.SurfaceCLI: true}
	for _, a := range o.Agents {
		known[a] = true
	}
	for _, s := range all {
		if s.Surface != "" {
			known[s.Surface] = true
		}
	}
	if known[o.Agent] {
		return nil
	}
	e := loom.Errorf(loom.EINVALID, "agent %q: no sessions are of it, and loom knows no agent of that name; use one of %s",
		o.Agent, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
	e.Err = ErrUnknownAgent
	return e
}

// ErrUnknownAgent is in the chain of the error of a report of an agent
// that neither the store's sessions nor Options.Agents know (a typo):
// the command line takes it as a usage error.
var ErrUnknownAgent = errors.New("unknown agent")

// Build makes the report o asks for from st.
func Build(ctx context.Context, st Slicer, o Options) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.Breakdown == ByMember && o.Member == nil {
		return nil, loom.Errorf(loom.EINVALID, "a breakdown by member is of a team's sessions: add --team NAME")
	}
	loc, now := Clock(o.Location, o.Now)
	slices, err := st.UsageSlices(ctx, loom.UsageSliceFilter{UserID: o.UserID, ProjectID: o.ProjectID, Surface: o.Agent,
		BySession: o.By == Session || o.Breakdown == ByMember, Since: o.Since, Until: o.Until, LongContext: pricing.LongContextTokens})
	if err != nil {
		return nil, err
	}
	if len(slices) == 0 && o.Agent != "" {
		if err := knownAgent(ctx, st, o); err != nil {
			return nil, err
		}
	}
	rep := &Report{By: o.By, Breakdown: o.Breakdown, TZ: ZoneName(loc), Since: writable(o.Since), Until: writable(o.Until), Rows: []Row{}, PricesAsOf: o.Prices.AsOf()}
	g := newRowGroups(o, loc, slices, now)
	parts := map[*Row]map[string]*Part{}
	for i := range slices {
		s := &slices[i]
		row := g.row(i, s)
		cost, priced, model := o.sliceCost(s)
		row.add(s.Usage, s.Messages, cost, priced, model)
		rep.Total.add(s.Usage, s.Messages, cost, priced, model)
		row.addModel(model)
		if o.Breakdown == "" {
			continue
		}
		key, name := o.breakdownKey(s, model)
		if parts[row] == nil {
			parts[row] = map[string]*Part{}
		}
		p := parts[row][key]
		if p == nil {
			p = &Part{Key: key, Name: name}
			parts[row][key] = p
		}
		p.add(s.Usage, s.Messages, cost, priced, model)
	}
	if o.Breakdown == ByProject {
		labelProjects(ctx, o, parts)
	}
	seen := map[*Row]bool{}
	for _, row := range g.rows {
		if seen[row] {
			continue
		}
		seen[row] = true
		row.finish(parts[row], o.By, now, loc)
		rep.Rows = append(rep.Rows, *row)
	}
	rep.Total.round()
	if o.By == Session {
		// Sessions by their last message, as a list of them runs.
		sort.SliceStable(rep.Rows, func(i, j int) bool {
			a, b := rep.Rows[i], rep.Rows[j]
			if !a.End.Equal(b.End) {
				return a.End.Before(b.End)
			}
			return a.Period < b.Period
		})
		if err := titles(ctx, st, o, rep.Rows); err != nil {
			return nil, err
		}
		return rep, nil
	}
	sort.SliceStable(rep.Rows, func(i, j int) bool { return rep.Rows[i].Start.Before(rep.Rows[j].Start) })
	return rep, nil
}

// titles sets the Title of each row of a report by session.
func titles(ctx context.Context, st Slicer, o Options, rows []Row) error {
	if len(rows) == 0 {
		return nil
	}
	f := loom.UsageFilter{UserID: o.UserID, ProjectID: o.ProjectID, SessionsOnly: true}
	if len(rows) == 1 {
		f.SessionID = rows[0].Period
	}
	u, err := st.Usage(ctx, f)
	if err != nil {
		return err
	}
	name := make(map[string]string, len(u.BySession))
	for _, r := range u.BySession {
		name[r.Key] = r.Name
	}
	for i := range rows {
		rows[i].Title = name[rows[i].Period]
	}
	return nil
}

// SessionReader reads a session by id.
type SessionReader interface {
	Session(ctx context.Context, id string) (*loom.Session, error)
}

// Members names the member whose session each id of a team's store st
// is (Session.Member), each session read once: Options.Member of a
// team's report. A session it cannot read is named "".
func Members(ctx context.Context, st SessionReader) func(sessionID string) string {
	names := map[string]string{}
	return func(id string) string {
		n, ok := names[id]
		if !ok {
			if s, err := st.Session(ctx, id); err == nil {
				n = s.Member
			}
			names[id] = n
		}
		return n
	}
}
