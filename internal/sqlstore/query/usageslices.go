package query

import (
	"fmt"
	"time"

	"github.com/loomhq/loom"
)

// RollupLongContext is the prompt size above which the usage roll-up
// (usage_slices) marks a message long-context: pricing's threshold. A
// filter with another threshold is answered from the messages.
const RollupLongContext = 200_000

// UsageHasUsage is the condition that message m has usage a usage slice
// counts: tokens or a cost.
const UsageHasUsage = `(m.input_tokens <> 0 OR m.output_tokens <> 0 OR m.cache_read_tokens <> 0 OR m.cache_write_tokens <> 0 OR m.cost_usd <> 0)`

// notInherited is the condition that session s counts message m: a
// fork's inherited history is counted in the session it was made in.
const notInherited = `NOT (s.kind = 'fork' AND m.turn <= s.fork_turn)`

// RollupColumns are the columns of usage_slices an engine's refresh
// writes, in the order RollupStale and RollupPending select them.
const RollupColumns = `session_id, hour, quarter, provider, model, long_context, user_id, surface, project_id, project_name, live,
	first_at, last_at, messages, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
	cache_write_1h_tokens, cost_usd, api_calls, compactions`

// rollupSelect is the select list of a refresh: the slices of session s
// grouped by s.id (which the other columns of s depend on), of its
// messages m.
func rollupSelect(d Dialect) string {
	return `s.id, ` + d.Hour + `, ` + d.Quarter + `, m.provider, m.model, ` +
		fmt.Sprintf("(m.input_tokens + m.cache_read_tokens + m.cache_write_tokens > %d)", RollupLongContext) +
		`, s.user_id, s.surface, s.project_id, s.project_name, s.deleted_at IS NULL, min(m.created_at), max(m.created_at), count(*), ` +
		UsageTotals("m.")
}

// RollupStale returns the query whose rows are the slices of the
// sessions listed in table stale (column session_id), summed whole from
// the messages they read.
func RollupStale(d Dialect, stale string) string {
	return `SELECT ` + rollupSelect(d) + `
	FROM ` + stale + ` st ` + d.Join + ` sessions s ON s.id = st.session_id ` + d.Join + ` session_messages m ON m.session_id = st.session_id
	WHERE ` + UsageHasUsage + ` AND ` + notInherited + `
	GROUP BY s.id, 2, 3, m.provider, m.model, 6`
}

// RollupPending returns the query whose rows are the slices of the rows
// listed in table pending (store_id, seq), for each session that reads
// them but is not in table stale, to be added to the roll-up.
func RollupPending(d Dialect, pending, stale string) string {
	return `SELECT ` + rollupSelect(d) + `
	FROM ` + pending + ` p ` + d.Join + ` messages m ON m.session_id = p.store_id AND m.seq = p.seq
	` + d.Join + ` spans sp ON sp.store_id = p.store_id AND p.seq BETWEEN sp.first_seq AND sp.last_seq
	` + d.Join + ` sessions s ON s.id = sp.session_id
	WHERE ` + UsageHasUsage + ` AND ` + notInherited + ` AND sp.session_id NOT IN (SELECT session_id FROM ` + stale + `)
	GROUP BY s.id, 2, 3, m.provider, m.model, 6`
}

// RollupAdd is the ON CONFLICT clause that adds a slice to the one the
// roll-up holds; least and greatest are the engine's two-argument
// minimum and maximum functions.
func RollupAdd(least, greatest string) string {
	set := `first_at = ` + least + `(usage_slices.first_at, excluded.first_at), last_at = ` + greatest + `(usage_slices.last_at, excluded.last_at)`
	for _, c := range []string{"messages", "input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens",
		"cache_write_tokens", "cache_write_1h_tokens", "cost_usd", "api_calls", "compactions"} {
		set += ", " + c + " = usage_slices." + c + " + excluded." + c
	}
	return ` ON CONFLICT (session_id, hour, quarter, provider, model, long_context) DO UPDATE SET ` + set
}

// Rollupable reports whether the roll-up can answer f: its threshold is
// the roll-up's and its bounds fall on quarter hours.
func Rollupable(f loom.UsageSliceFilter) bool {
	on := func(t time.Time) bool {
		return t.IsZero() || t.Equal(t.Truncate(loom.UsageSliceMinutes*time.Minute))
	}
	return f.LongContext == RollupLongContext && on(f.Since) && on(f.Until)
}

// UsageRollup returns the query of the usage slices of f read from the
// roll-up, oldest first, in the rows of UsageSlices; f must be
// Rollupable. With a user or BySession, the query reads the table's rows in its key's
// order, one per session, and merged reports whether they still need
// MergeSlices: adding up the rows of several sessions is cheaper in Go
// than in either engine's GROUP BY. Without a user the engine groups them.
func UsageRollup(d Dialect, f loom.UsageSliceFilter) (q string, args []any, merged bool) {
	c := New(d)
	if f.UserID != "" {
		c.Add("u.user_id = ?", f.UserID)
	}
	c.Add("u.live = TRUE")
	for _, col := range []Column{{Name: "u.project_id", Value: f.ProjectID}, {Name: "u.surface", Value: f.Surface}, {Name: "u.session_id", Value: f.SessionID}} {
		if col.Value != "" {
			c.Add(col.Name+" = ?", col.Value)
		}
	}
	// A bound on a quarter hour is a bound on the slices' starts; Until
	// is exclusive. The hours are text, which sorts in time order within
	// years 0000 to 9999: a bound beyond them is the nearer end.
	bound := func(t time.Time, after, same string) {
		t = loom.ClampTime(t).UTC()
		hour, quarter := t.Format("2006-01-02T15"), t.Minute()/loom.UsageSliceMinutes
		c.Add("(u.hour "+after+" ? OR (u.hour = ? AND u.quarter "+same+" ?))", hour, hour, quarter)
	}
	if !f.Since.IsZero() {
		bound(f.Since, ">", ">=")
	}
	if !f.Until.IsZero() {
		bound(f.Until, "<", "<")
	}
	order := `u.hour, u.quarter, u.surface, u.project_id, u.provider, u.model, u.long_context`
	if f.UserID != "" || f.BySession {
		return `SELECT u.hour, u.quarter, u.first_at, u.last_at, u.surface, u.project_id, u.project_name,
	u.provider, u.model, u.long_context, u.messages, u.input_tokens, u.output_tokens, u.reasoning_tokens,
	u.cache_read_tokens, u.cache_write_tokens, u.cache_write_1h_tokens, u.cost_usd, u.api_calls, u.compactions, u.session_id
	FROM usage_slices u WHERE ` + c.String() + ` ORDER BY ` + order + `, u.session_id`, c.Args, false
	}
	return `SELECT u.hour, u.quarter, min(u.first_at), max(u.last_at), u.surface, u.project_id, max(u.project_name),
	u.provider, u.model, u.long_context, CAST(sum(u.messages) AS BIGINT), ` + UsageTotals("u.") + `, ''
	FROM usage_slices u WHERE ` + c.String() + ` GROUP BY ` + order + ` ORDER BY ` + order, c.Args, true
}

// MergeSlices adds up the consecutive slices of rows that share their
// start, surface, project, provider, model and long-context flag (the
// rows of several sessions), in place, and returns the merged slices.
func MergeSlices(rows []loom.UsageSlice) []loom.UsageSlice {
	out := rows[:0]
	for _, r := range rows {
		if n := len(out); n > 0 {
			p := &out[n-1]
			if p.Start.Equal(r.Start) && p.Surface == r.Surface && p.ProjectID == r.ProjectID && p.Provider == r.Provider &&
				p.Model == r.Model && p.LongContext == r.LongContext {
				if r.First.Before(p.First) {
					p.First = r.First
				}
				if r.Last.After(p.Last) {
					p.Last = r.Last
				}
				p.ProjectName = max(p.ProjectName, r.ProjectName)
				p.Messages += r.Messages
				p.Usage.Add(r.Usage)
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// ReadUsageSlices answers an engine's UsageSlices with run, which runs a
// query of slices: from the roll-up when it is current (the engine
// caught it up) and can answer f, from the messages otherwise.
func ReadUsageSlices(d Dialect, f loom.UsageSliceFilter, current bool, run func(q string, args []any) ([]loom.UsageSlice, error)) ([]loom.UsageSlice, error) {
	if !current || !Rollupable(f) {
		q, args := UsageSlices(d, f)
		return run(q, args)
	}
	q, args, merged := UsageRollup(d, f)
	rows, err := run(q, args)
	if err != nil || merged || f.BySession {
		return rows, err
	}
	for i := range rows {
		rows[i].SessionID = ""
	}
	return MergeSlices(rows), nil
}
