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
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
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
	loc := o.Location
	if loc == nil {
		loc = time.Local
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
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
	var rows []*Row
	var index map[time.Time]*Row
	var sessions map[string]*Row
	switch o.By {
	case Block:
		rows = blocks(slices, now)
	case Session:
		sessions = map[string]*Row{}
	default:
		index = map[time.Time]*Row{}
	}
	parts := map[*Row]map[string]*Part{}
	for i := range slices {
		s := &slices[i]
		var row *Row
		switch o.By {
		case Block:
			row = rows[i]
		case Session:
			if row = sessions[s.SessionID]; row == nil {
				row = &Row{Period: s.SessionID, Start: s.First, End: s.Last}
				sessions[s.SessionID] = row
				rows = append(rows, row)
			}
			if s.First.Before(row.Start) {
				row.Start = s.First
			}
			if s.Last.After(row.End) {
				row.End = s.Last
			}
		default:
			start, end, name := period(o.By, s.Start.In(loc), o.weekStart())
			if row = index[start]; row == nil {
				row = &Row{Period: name, Start: start, End: end}
				index[start] = row
				rows = append(rows, row)
			}
		}
		cost, priced := o.Prices.Cost(s.Provider, s.Model, s.Usage, s.LongContext)
		if !priced && s.Usage.CostUSD != 0 {
			// A cost the provider reported for a model the table
			// does not price.
			cost, priced = s.Usage.CostUSD, true
		}
		model := s.Model
		if model == "" {
			model = "(unknown model)"
		}
		row.add(s.Usage, s.Messages, cost, priced, model)
		rep.Total.add(s.Usage, s.Messages, cost, priced, model)
		if i := sort.SearchStrings(row.Models, model); i == len(row.Models) || row.Models[i] != model {
			row.Models = append(row.Models, "")
			copy(row.Models[i+1:], row.Models[i:])
			row.Models[i] = model
		}
		if o.Breakdown == "" {
			continue
		}
		key, name := s.Provider+":"+s.Model, model
		switch o.Breakdown {
		case ByAgent:
			key, name = s.Surface, s.Surface
		case ByProject:
			key, name = s.ProjectID, s.ProjectName
		case ByMember:
			key = o.Member(s.SessionID)
			if key == "" {
				key = "(unknown member)"
			}
			name = key
		}
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
		var refs []ProjectRef
		for _, ps := range parts {
			for _, p := range ps {
				refs = append(refs, ProjectRef{ID: p.Key, Name: p.Name})
			}
		}
		labels := ProjectLabels(ctx, o.Roots, o.UserID, refs)
		for _, ps := range parts {
			for _, p := range ps {
				p.Name = labels[p.Key]
			}
		}
	}
	seen := map[*Row]bool{}
	for _, row := range rows {
		if seen[row] {
			continue
		}
		seen[row] = true
		row.round()
		for _, p := range parts[row] {
			p.round()
			row.Breakdown = append(row.Breakdown, *p)
		}
		sort.Slice(row.Breakdown, func(i, j int) bool {
			a, b := row.Breakdown[i], row.Breakdown[j]
			if a.Cost() != b.Cost() {
				return a.Cost() > b.Cost()
			}
			if a.TotalTokens != b.TotalTokens {
				return a.TotalTokens > b.TotalTokens
			}
			return a.Key < b.Key
		})
		if row.Block != nil {
			row.Block.rate(row, now, loc)
			row.Period = row.Start.In(loc).Format("2006-01-02 15:04")
			row.Block.First, row.Block.Last = writable(row.Block.First), writable(row.Block.Last)
		}
		if o.By == Session {
			row.Start, row.End = row.Start.In(loc), row.End.In(loc)
		}
		row.Start, row.End = writable(row.Start), writable(row.End)
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

// weekStart is the first day of o's weeks.
func (o Options) weekStart() time.Weekday {
	if o.WeekStart == nil {
		return time.Monday
	}
	return *o.WeekStart
}

// StartOfWeek reads a day's name (monday … sunday, or its first three
// letters) as the first day of a week.
func StartOfWeek(s string) (time.Weekday, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for d := time.Sunday; d <= time.Saturday; d++ {
		name := strings.ToLower(d.String())
		if s == name || (len(s) >= 3 && strings.HasPrefix(name, s)) {
			return d, nil
		}
	}
	return 0, loom.Errorf(loom.EINVALID, "%q is not a day of the week: use monday, tuesday, … or sunday", s)
}

// period returns the start, end and name of the day, week (from
// weekday first) or month of t, in t's location.
func period(by string, t time.Time, first time.Weekday) (start, end time.Time, name string) {
	y, m, d := t.Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, t.Location())
	switch by {
	case Week:
		start = day.AddDate(0, 0, -((int(day.Weekday()) - int(first) + 7) % 7))
		if first != time.Monday {
			// Not an ISO week: named by its first day.
			return start, start.AddDate(0, 0, 7), start.Format("2006-01-02")
		}
		wy, w := start.ISOWeek()
		return start, start.AddDate(0, 0, 7), fmt.Sprintf("%d-W%02d", wy, w)
	case Month:
		start = time.Date(y, m, 1, 0, 0, 0, 0, t.Location())
		return start, start.AddDate(0, 1, 0), start.Format("2006-01")
	default:
		return day, day.AddDate(0, 0, 1), day.Format("2006-01-02")
	}
}

// blocks returns the block of each slice, slices being oldest first: a
// block starts at the hour (UTC) of a message that is not in the block
// before, because that block has ended or no message came for
// BlockLength, and lasts BlockLength.
func blocks(slices []loom.UsageSlice, now time.Time) []*Row {
	out := make([]*Row, len(slices))
	var cur *Row
	for i := range slices {
		s := &slices[i]
		if cur == nil || !s.First.Before(cur.End) || s.First.Sub(cur.Block.Last) >= BlockLength {
			start := s.First.UTC().Truncate(time.Hour)
			cur = &Row{Start: start, End: start.Add(BlockLength), Block: &BlockInfo{First: s.First, Last: s.Last}}
		}
		if s.First.Before(cur.Block.First) {
			cur.Block.First = s.First
		}
		if s.Last.After(cur.Block.Last) {
			cur.Block.Last = s.Last
		}
		out[i] = cur
	}
	return out
}

// rate works out the burn rate of block row and, when it is active at
// now, its projection.
func (b *BlockInfo) rate(row *Row, now time.Time, loc *time.Location) {
	row.Start, row.End = row.Start.In(loc), row.End.In(loc)
	b.First, b.Last = b.First.In(loc), b.Last.In(loc)
	// A block that starts after now (files from a machine whose clock
	// runs ahead) is not active yet.
	b.Active = !now.Before(row.Start) && now.Before(row.End) && now.Sub(b.Last) < BlockLength
	hours := math.Max(b.Last.Sub(b.First).Hours(), 1.0/60)
	b.TokensPerHour = math.Round(float64(row.TotalTokens) / hours)
	if row.CostUSD != nil {
		c := loom.RoundCost(*row.CostUSD / hours)
		b.CostPerHour = &c
	}
	if !b.Active {
		return
	}
	left := row.End.Sub(now)
	b.RemainingMinutes = int64(math.Ceil(left.Minutes()))
	b.ProjectedTokens = row.TotalTokens + int64(math.Round(b.TokensPerHour*left.Hours()))
	if b.CostPerHour != nil {
		c := loom.RoundCost(*row.CostUSD + *b.CostPerHour*left.Hours())
		b.ProjectedCostUSD = &c
	}
}

// ParseBound reads --since or --until as people write one, in loc: a
// date (2026-03-01 or 20260301), a time (2026-03-01T14:00, RFC 3339),
// or an age before now (7d). A date as an upper bound means the end of
// that day.
//
// Dates and times run from year 0000 to 9999, as RFC 3339 writes them.
// A bound at an end of that range bounds nothing, and is the zero time:
// a lower one at or before the start of year 0000 (UTC), an upper one
// whose end is in year 10000 (in loc or in UTC), so that "--until
// 9999-12-31" reads as "to the end" in any zone. An age is at most
// human.MaxAge (about 292 years).
func ParseBound(s string, loc *time.Location, now time.Time, upper bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if loc == nil {
		loc = time.Local
	}
	for _, layout := range []string{"2006-01-02", "20060102"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			if upper {
				t = t.AddDate(0, 0, 1)
			}
			return bound(t, upper), nil
		}
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return bound(t, upper), nil
		}
	}
	if d, err := human.ParseAge(s); err == nil {
		return bound(now.Add(-d), upper), nil
	}
	if outOfRange.MatchString(s) {
		return time.Time{}, loom.Errorf(loom.EINVALID, "%q is out of range: dates run from 0000-01-01 to 9999-12-31", s)
	}
	return time.Time{}, loom.Errorf(loom.EINVALID, "%q is not a date (%s), a time (RFC 3339) or an age (7d)", s, now.AddDate(0, 0, -7).Format("2006-01-02"))
}

// outOfRange matches a date whose year RFC 3339 cannot write: negative,
// or of more than four digits.
var outOfRange = regexp.MustCompile(`^([-+]\d+|\d{5,})-\d\d-\d\d`)

// bound returns t as a bound of a report, the zero time when it is at an
// end of the years RFC 3339 writes and so bounds nothing (see
// ParseBound).
func bound(t time.Time, upper bool) time.Time {
	if upper {
		if t.Year() > 9999 || t.After(loom.MaxTime) {
			return time.Time{}
		}
		return t
	}
	if !t.After(loom.MinTime) {
		return time.Time{}
	}
	return t
}

// writable returns t as JSON can write it: in its own zone when its year
// there is one of 0000 to 9999, else in UTC and within loom.MinTime and
// loom.MaxTime. A row of the last day of year 9999 ends in year 10000.
func writable(t time.Time) time.Time {
	if y := t.Year(); y >= 0 && y <= 9999 {
		return t
	}
	return loom.ClampTime(t.UTC())
}

// Request is a report asked for in words, as the API's query, the MCP
// tool's arguments and the command line's flags give it.
type Request struct {
	By        string `json:"by"`
	Breakdown string `json:"breakdown"`
	Since     string `json:"since"`
	Until     string `json:"until"`
	TZ        string `json:"tz"`
	Agent     string `json:"agent"`
	// StartOfWeek is the first day of a week: monday (the default) …
	// sunday.
	StartOfWeek string `json:"start_of_week"`
	// Flags names the parameters in errors as the command line's flags
	// (--since), not as the API's (since).
	Flags bool `json:"-"`
}

// Options reads r into the options of a report of user's, days cut in
// def when r names no time zone, by day when it names no period. An
// error is EINVALID and names the parameter.
func (r Request) Options(user string, def *time.Location, now time.Time) (Options, error) {
	o := Options{UserID: user, By: r.By, Breakdown: r.Breakdown, Agent: r.Agent, Location: def, Now: now}
	if o.By == "" {
		o.By = Day
	}
	if r.StartOfWeek != "" {
		d, err := StartOfWeek(r.StartOfWeek)
		if err != nil {
			return o, loom.Errorf(loom.EINVALID, "%s: %s", r.name("start-of-week"), loom.ErrorMessage(err))
		}
		o.WeekStart = &d
	}
	if r.TZ != "" {
		loc, err := time.LoadLocation(r.TZ)
		if err != nil {
			return o, loom.Errorf(loom.EINVALID, "%s %q is not a time zone: use an IANA name such as Europe/Berlin, or UTC", r.name("tz"), r.TZ)
		}
		o.Location = loc
	}
	for _, b := range []struct {
		name, value string
		to          *time.Time
		upper       bool
	}{{"since", r.Since, &o.Since, false}, {"until", r.Until, &o.Until, true}} {
		if b.value == "" {
			continue
		}
		t, err := ParseBound(b.value, o.Location, now, b.upper)
		if err != nil {
			return o, loom.Errorf(loom.EINVALID, "%s: %s", r.name(b.name), loom.ErrorMessage(err))
		}
		*b.to = t
	}
	if !o.Since.IsZero() && !o.Until.IsZero() && !o.Until.After(o.Since) {
		return o, loom.Errorf(loom.EINVALID, "%s must be after %s", r.name("until"), r.name("since"))
	}
	return o, o.Check()
}

// name is how r's errors name parameter p.
func (r Request) name(p string) string {
	if r.Flags {
		return "--" + p
	}
	return p
}

// ZoneName is loc's name as a user knows it: the IANA name of the
// machine's own zone for time.Local (from $TZ, else /etc/localtime's
// link), which Go names "Local"; "Local" only when neither says.
func ZoneName(loc *time.Location) string {
	if loc != time.Local {
		return loc.String()
	}
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" && !strings.HasPrefix(tz, "/") {
		return tz
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok && name != "" {
			return name
		}
	}
	return loc.String()
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
