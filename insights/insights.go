// Package insights makes the insights of a user's history over a range
// of days: activity per day (sessions, prompts, replies, tokens, cost)
// for a calendar, tool calls by tool with their failure rates, the mix
// of models, agents and projects, the longest and costliest sessions,
// and how long sessions run from the first prompt to the last reply.
// `loom usage insights` and the dashboard's insights page both make
// theirs with Build, so they agree to the count and the cent.
//
// Tokens and costs are package report's (priced when the report is
// made); prompts, sessions and tool calls are the store's activity
// (loom.ActivityReader).
package insights

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/report"
)

// DefaultDays is the range of a report that names none: the last 90
// days, today included.
const DefaultDays = 90

// DefaultTop is how many of the longest and costliest sessions a report
// lists unless Options say.
const DefaultTop = 10

// Store is what insights are read from: a loom.Store and the activity
// its engine reads (Of).
type Store interface {
	report.Slicer
	loom.ActivityReader
	Session(ctx context.Context, id string) (*loom.Session, error)
}

// Options say whose insights, over which days.
type Options struct {
	UserID    string
	ProjectID string
	// Since and Until bound the range: [Since, Until). A zero Until is
	// the end of today; a zero Since is DefaultDays before it.
	Since, Until time.Time
	// Location is the time zone days are cut in (time.Local when nil).
	Location *time.Location
	// Prices is the price table (the bundled one when nil).
	Prices *pricing.Table
	// Now is today (time.Now when zero).
	Now time.Time
	// Top is how many sessions the longest and costliest lists hold
	// (DefaultTop when 0).
	Top int
	// Roots says where a project's sessions ran, which names the
	// projects that share a name (report.Options.Roots): the engine's
	// edit index.
	Roots report.Rooter
}

// Report is the insights of a range of days.
type Report struct {
	// Since and Until are the first and the last day of the range.
	Since      string `json:"since"`
	Until      string `json:"until"`
	TZ         string `json:"tz"`
	PricesAsOf string `json:"prices_as_of"`
	Totals     Totals `json:"totals"`
	// Days are every day of the range, oldest first, idle days too.
	Days []Day `json:"days"`
	// Tools are the tools called, most called first.
	Tools []Tool `json:"tools"`
	// Models, Agents and Projects are the range's tokens and cost by
	// model, by agent (the surface: cli, or the agent a session was
	// imported from) and by project, costliest first.
	Models   []Share `json:"models"`
	Agents   []Share `json:"agents"`
	Projects []Share `json:"projects"`
	// Longest are the sessions that ran longest from their first
	// prompt to their last reply in the range; Costliest those that
	// cost most in it (by tokens where none has a price).
	Longest   []Session `json:"longest_sessions"`
	Costliest []Session `json:"costliest_sessions"`
	Durations Durations `json:"durations"`
	// Unpriced names the models whose tokens are counted without a
	// cost.
	Unpriced []string `json:"unpriced_models,omitempty"`
}

// Totals are a range's figures.
type Totals struct {
	// ActiveDays are the days with a prompt or a reply.
	ActiveDays int   `json:"active_days"`
	Sessions   int64 `json:"sessions"`
	Prompts    int64 `json:"prompts"`
	// Replies are the model's messages with usage: about one per
	// model call.
	Replies    int64    `json:"replies"`
	ToolCalls  int64    `json:"tool_calls"`
	ToolErrors int64    `json:"tool_errors"`
	Tokens     int64    `json:"tokens"`
	CostUSD    *float64 `json:"cost_usd"`
}

// Day is one day's activity.
type Day struct {
	Date string `json:"date"`
	// Sessions are the sessions with a prompt that day.
	Sessions int64    `json:"sessions"`
	Prompts  int64    `json:"prompts"`
	Replies  int64    `json:"replies"`
	Tokens   int64    `json:"tokens"`
	CostUSD  *float64 `json:"cost_usd"`
}

// Tool is one tool's calls.
type Tool struct {
	Name   string `json:"name"`
	Calls  int64  `json:"calls"`
	Errors int64  `json:"errors"`
	// FailureRate is Errors over Calls, from 0 to 1.
	FailureRate float64 `json:"failure_rate"`
}

// Share is one model's, agent's or project's part of the range.
type Share struct {
	Key     string   `json:"key"`
	Name    string   `json:"name"`
	Replies int64    `json:"replies"`
	Tokens  int64    `json:"tokens"`
	CostUSD *float64 `json:"cost_usd"`
	// TokenShare is its part of the range's tokens, from 0 to 1.
	TokenShare float64 `json:"token_share"`
}

// Session is one session in a list of the longest or costliest.
type Session struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Agent   string `json:"agent"`
	Project string `json:"project"`
	// FirstPrompt and LastReply are its first prompt's and last
	// reply's times in the range; zero when it has none.
	FirstPrompt time.Time `json:"first_prompt,omitzero"`
	LastReply   time.Time `json:"last_reply,omitzero"`
	// DurationSeconds is the time between them (0 without both).
	DurationSeconds float64  `json:"duration_seconds"`
	Messages        int64    `json:"messages"`
	Prompts         int64    `json:"prompts"`
	Tokens          int64    `json:"tokens"`
	CostUSD         *float64 `json:"cost_usd"`
}

// Durations are how long the range's sessions ran from their first
// prompt to their last reply: those with both in the range.
type Durations struct {
	Sessions       int     `json:"sessions"`
	MedianSeconds  float64 `json:"median_seconds"`
	P90Seconds     float64 `json:"p90_seconds"`
	LongestSeconds float64 `json:"longest_seconds"`
}

// Build makes the insights of o from st.
func Build(ctx context.Context, st Store, o Options) (*Report, error) {
	loc, now := report.Clock(o.Location, o.Now)
	now = now.In(loc)
	until := o.Until
	if until.IsZero() {
		_, until = report.LastDays(now, DefaultDays)
	}
	since := o.Since
	if since.IsZero() {
		since = until.AddDate(0, 0, -DefaultDays)
	}
	if !until.After(since) {
		return nil, loom.Errorf(loom.EINVALID, "--until must be after --since")
	}
	top := o.Top
	if top <= 0 {
		top = DefaultTop
	}

	src := report.Cached(st)
	ro := report.Options{UserID: o.UserID, ProjectID: o.ProjectID, By: report.Day, Since: since, Until: until,
		Location: loc, Prices: o.Prices, Now: now, Roots: o.Roots}
	reps := map[string]*report.Report{}
	for _, b := range []string{report.ByModel, report.ByAgent, report.ByProject} {
		ro.Breakdown = b
		r, err := report.Build(ctx, src, ro)
		if err != nil {
			return nil, err
		}
		reps[b] = r
	}
	ro.By, ro.Breakdown = report.Session, ""
	bySession, err := report.Build(ctx, src, ro)
	if err != nil {
		return nil, err
	}
	act, err := st.Activity(ctx, loom.ActivityFilter{UserID: o.UserID, ProjectID: o.ProjectID, Since: since, Until: until})
	if err != nil {
		return nil, err
	}

	last := until.Add(-time.Nanosecond).In(loc)
	rep := &Report{Since: since.In(loc).Format(time.DateOnly), Until: last.Format(time.DateOnly), TZ: reps[report.ByModel].TZ,
		PricesAsOf: reps[report.ByModel].PricesAsOf, Days: []Day{}, Tools: []Tool{}, Longest: []Session{}, Costliest: []Session{}}
	rep.days(since.In(loc), until, reps[report.ByModel], act)
	rep.tools(act.Tools)
	total := reps[report.ByModel].Total
	rep.Totals.Tokens, rep.Totals.CostUSD, rep.Totals.Replies, rep.Unpriced = total.TotalTokens, total.CostUSD, total.Messages, total.Unpriced
	rep.Models = shares(reps[report.ByModel], total.TotalTokens)
	rep.Agents = shares(reps[report.ByAgent], total.TotalTokens)
	rep.Projects = shares(reps[report.ByProject], total.TotalTokens)
	if err := rep.sessions(ctx, st, act.Sessions, bySession, top); err != nil {
		return nil, err
	}
	return rep, nil
}

// days fills the calendar from since to until and the totals it sums.
func (r *Report) days(since, until time.Time, rep *report.Report, act *loom.Activity) {
	index := map[string]int{}
	for d := since; d.Before(until); d = d.AddDate(0, 0, 1) {
		index[d.Format(time.DateOnly)] = len(r.Days)
		r.Days = append(r.Days, Day{Date: d.Format(time.DateOnly)})
	}
	for _, row := range rep.Rows {
		if i, ok := index[row.Period]; ok {
			d := &r.Days[i]
			d.Replies, d.Tokens, d.CostUSD = row.Messages, row.TotalTokens, row.CostUSD
		}
	}
	loc := since.Location()
	seen := map[string]map[string]bool{}
	for _, p := range act.Prompts {
		day := p.Start.In(loc).Format(time.DateOnly)
		i, ok := index[day]
		if !ok {
			continue
		}
		r.Days[i].Prompts += p.Count
		if seen[day] == nil {
			seen[day] = map[string]bool{}
		}
		if !seen[day][p.SessionID] {
			seen[day][p.SessionID] = true
			r.Days[i].Sessions++
		}
	}
	for _, d := range r.Days {
		r.Totals.Prompts += d.Prompts
		if d.Prompts > 0 || d.Replies > 0 {
			r.Totals.ActiveDays++
		}
	}
	r.Totals.Sessions = int64(len(act.Sessions))
}

func (r *Report) tools(counts []loom.ToolCount) {
	for _, c := range counts {
		t := Tool{Name: c.Name, Calls: c.Calls, Errors: c.Errors}
		if c.Calls > 0 {
			t.FailureRate = float64(c.Errors) / float64(c.Calls)
		}
		r.Tools = append(r.Tools, t)
		r.Totals.ToolCalls += c.Calls
		r.Totals.ToolErrors += c.Errors
	}
}

// shares is a report's breakdown summed over its days, costliest first
// (by tokens where costs tie), with each one's part of the range's tokens.
func shares(rep *report.Report, tokens int64) []Share {
	parts := rep.Shares()
	list := make([]Share, 0, len(parts))
	for _, p := range parts {
		s := Share{Key: p.Key, Name: p.Name, Replies: p.Messages, Tokens: p.Tokens, CostUSD: p.CostUSD}
		if tokens > 0 {
			s.TokenShare = float64(s.Tokens) / float64(tokens)
		}
		list = append(list, s)
	}
	return list
}

// sessions fills the durations and the lists of the longest and the
// costliest sessions.
func (r *Report) sessions(ctx context.Context, st Store, act []loom.SessionActivity, bySession *report.Report, top int) error {
	usage := map[string]*report.Row{}
	for i := range bySession.Rows {
		usage[bySession.Rows[i].Period] = &bySession.Rows[i]
	}
	activity := map[string]loom.SessionActivity{}
	var spans []float64
	for _, a := range act {
		activity[a.SessionID] = a
		if d := duration(a); d > 0 {
			spans = append(spans, d)
		}
	}
	sort.Float64s(spans)
	r.Durations.Sessions = len(spans)
	if n := len(spans); n > 0 {
		r.Durations.MedianSeconds = quantile(spans, 0.5)
		r.Durations.P90Seconds = quantile(spans, 0.9)
		r.Durations.LongestSeconds = spans[n-1]
	}

	longest := slices.Clone(act)
	slices.SortStableFunc(longest, func(a, b loom.SessionActivity) int {
		return cmp.Or(-cmp.Compare(duration(a), duration(b)), -cmp.Compare(a.Messages, b.Messages), cmp.Compare(a.SessionID, b.SessionID))
	})
	for _, a := range longest[:min(top, len(longest))] {
		if duration(a) <= 0 {
			break
		}
		s, err := r.session(ctx, st, a.SessionID, activity, usage)
		if err != nil {
			return err
		}
		if s != nil {
			r.Longest = append(r.Longest, *s)
		}
	}

	costly := slices.Clone(bySession.Rows)
	slices.SortStableFunc(costly, func(a, b report.Row) int {
		return cmp.Or(-cmp.Compare(a.Cost(), b.Cost()), -cmp.Compare(a.TotalTokens, b.TotalTokens), cmp.Compare(a.Period, b.Period))
	})
	for _, row := range costly[:min(top, len(costly))] {
		s, err := r.session(ctx, st, row.Period, activity, usage)
		if err != nil {
			return err
		}
		if s != nil {
			r.Costliest = append(r.Costliest, *s)
		}
	}
	return nil
}

// session reads one session of a list; nil when it is gone since.
func (r *Report) session(ctx context.Context, st Store, id string, activity map[string]loom.SessionActivity, usage map[string]*report.Row) (*Session, error) {
	s, err := st.Session(ctx, id)
	if loom.ErrorCode(err) == loom.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	a := activity[id]
	out := &Session{ID: s.ID, Title: s.Title, Agent: s.Surface, Project: s.Project.Name,
		FirstPrompt: a.FirstPrompt, LastReply: a.LastReply, DurationSeconds: duration(a), Messages: a.Messages, Prompts: a.Prompts}
	if u := usage[id]; u != nil {
		out.Tokens, out.CostUSD = u.TotalTokens, u.CostUSD
	}
	return out, nil
}

// duration is the seconds from a session's first prompt to its last
// reply, 0 without both or when the reply came first.
func duration(a loom.SessionActivity) float64 {
	if a.FirstPrompt.IsZero() || a.LastReply.IsZero() || !a.LastReply.After(a.FirstPrompt) {
		return 0
	}
	return a.LastReply.Sub(a.FirstPrompt).Seconds()
}

// quantile is the q-quantile of sorted (nearest rank).
func quantile(sorted []float64, q float64) float64 {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Of returns the Store of st: st, with the activity it reads
// (loom.Reads.Activity), or an error for a store that reads none.
func Of(st loom.Reader) (Store, error) {
	act := st.Reads().Activity
	if act == nil {
		return nil, errors.New("insights: this store cannot read activity")
	}
	return source{st: st, act: act}, nil
}

// source is a Store of a store and the activity its engine reads.
type source struct {
	st  loom.Reader
	act loom.ActivityReader
}

func (s source) UsageSlices(ctx context.Context, f loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	return s.st.UsageSlices(ctx, f)
}

func (s source) Usage(ctx context.Context, f loom.UsageFilter) (*loom.UsageReport, error) {
	return s.st.Usage(ctx, f)
}

func (s source) Session(ctx context.Context, id string) (*loom.Session, error) {
	return s.st.Session(ctx, id)
}

func (s source) Activity(ctx context.Context, f loom.ActivityFilter) (*loom.Activity, error) {
	return s.act.Activity(ctx, f)
}
