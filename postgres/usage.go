package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/loomhq/loom"
)

// usageSums are the totals of one usage group; sum(bigint) is numeric in
// PostgreSQL, so each sum is cast back.
const usageSums = `count(*), coalesce(sum(%[1]smessage_count), 0)::bigint, coalesce(sum(%[1]sinput_tokens), 0)::bigint,
	coalesce(sum(%[1]soutput_tokens), 0)::bigint, coalesce(sum(%[1]sreasoning_tokens), 0)::bigint,
	coalesce(sum(%[1]scache_read_tokens), 0)::bigint, coalesce(sum(%[1]scache_write_tokens), 0)::bigint,
	coalesce(sum(%[1]scost_usd), 0)::double precision, coalesce(sum(%[1]sapi_calls), 0)::bigint,
	coalesce(sum(%[1]scompactions), 0)::bigint`

// Usage implements loom.Store. Session and project totals come from the
// counters kept on session rows; the per-model split reads messages. All
// three are grouped inside the database.
func (s *Store) Usage(ctx context.Context, f loom.UsageFilter) (*loom.UsageReport, error) {
	if !storable(f.UserID, f.ProjectID, f.SessionID) {
		return &loom.UsageReport{}, nil
	}
	var c conds
	c.add("s.deleted_at IS NULL")
	if f.UserID != "" {
		c.add("s.user_id = ?", f.UserID)
	}
	if f.ProjectID != "" {
		c.add("s.project_id = ?", f.ProjectID)
	}
	if f.SessionID != "" {
		c.add("s.id = ?", f.SessionID)
	}
	w := " WHERE " + c.String()
	rep := &loom.UsageReport{}
	var err error
	sums := fmt.Sprintf(usageSums, "s.")
	if rep.BySession, err = s.usageRows(ctx, "session", `SELECT s.id, CASE WHEN s.title <> '' THEN s.title ELSE coalesce(s.key, s.id) END, `+sums+
		` FROM sessions s`+w+` GROUP BY s.id ORDER BY sum(s.cost_usd) DESC, sum(s.input_tokens + s.output_tokens) DESC, s.id`, c.args...); err != nil {
		return nil, err
	}
	if rep.ByProject, err = s.usageRows(ctx, "project", `SELECT s.project_id, CASE WHEN max(s.project_name) <> '' THEN max(s.project_name) ELSE max(s.surface) END, `+sums+
		` FROM sessions s`+w+` GROUP BY s.project_id ORDER BY sum(s.cost_usd) DESC, s.project_id`, c.args...); err != nil {
		return nil, err
	}
	msums := strings.Replace(fmt.Sprintf(usageSums, "m."), "count(*), coalesce(sum(m.message_count), 0)::bigint", "count(DISTINCT m.session_id), count(*)", 1)
	if rep.ByModel, err = s.usageRows(ctx, "model", `SELECT m.provider || ':' || m.model, m.model, `+msums+
		` FROM messages m JOIN sessions s ON s.id = m.session_id`+w+` AND m.model <> '' AND NOT (s.kind = 'fork' AND m.turn <= s.fork_turn) GROUP BY m.provider, m.model ORDER BY sum(m.cost_usd) DESC, m.provider, m.model`, c.args...); err != nil {
		return nil, err
	}
	for _, r := range rep.BySession {
		rep.Total.Add(r.Usage)
	}
	return rep, nil
}

func (s *Store) usageRows(ctx context.Context, group, q string, args ...any) ([]loom.UsageRow, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	defer rows.Close()
	var out []loom.UsageRow
	for rows.Next() {
		r := loom.UsageRow{Group: group}
		u := &r.Usage
		if err := rows.Scan(&r.Key, &r.Name, &r.Sessions, &r.Messages, &u.InputTokens, &u.OutputTokens,
			&u.ReasoningTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &u.CostUSD, &u.APICalls, &u.Compactions); err != nil {
			return nil, fmt.Errorf("usage: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	return out, nil
}
