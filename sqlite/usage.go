package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/loomhq/loom"
)

const usageSums = `count(*), coalesce(sum(%[1]smessage_count), 0), coalesce(sum(%[1]sinput_tokens), 0),
	coalesce(sum(%[1]soutput_tokens), 0), coalesce(sum(%[1]sreasoning_tokens), 0),
	coalesce(sum(%[1]scache_read_tokens), 0), coalesce(sum(%[1]scache_write_tokens), 0),
	coalesce(sum(%[1]scost_usd), 0), coalesce(sum(%[1]sapi_calls), 0), coalesce(sum(%[1]scompactions), 0)`

// Usage implements loom.Store. Session and project totals come from the
// counters kept on session rows; the per-model split reads messages.
func (s *Store) Usage(ctx context.Context, f loom.UsageFilter) (*loom.UsageReport, error) {
	where := []string{"s.deleted_at IS NULL"}
	var args []any
	if f.UserID != "" {
		where = append(where, "s.user_id = ?")
		args = append(args, f.UserID)
	}
	if f.ProjectID != "" {
		where = append(where, "s.project_id = ?")
		args = append(args, f.ProjectID)
	}
	if f.SessionID != "" {
		where = append(where, "s.id = ?")
		args = append(args, f.SessionID)
	}
	w := " WHERE " + strings.Join(where, " AND ")
	rep := &loom.UsageReport{}
	var err error
	sums := fmt.Sprintf(usageSums, "s.")
	if rep.BySession, err = s.usageRows(ctx, "session", `SELECT s.id, CASE WHEN s.title <> '' THEN s.title ELSE coalesce(s.key, s.id) END, `+sums+` FROM sessions s`+w+` GROUP BY s.id ORDER BY sum(s.cost_usd) DESC, sum(s.input_tokens + s.output_tokens) DESC`, args...); err != nil {
		return nil, err
	}
	if rep.ByProject, err = s.usageRows(ctx, "project", `SELECT s.project_id, CASE WHEN max(s.project_name) <> '' THEN max(s.project_name) ELSE max(s.surface) END, `+sums+` FROM sessions s`+w+` GROUP BY s.project_id ORDER BY sum(s.cost_usd) DESC`, args...); err != nil {
		return nil, err
	}
	msums := strings.Replace(fmt.Sprintf(usageSums, "m."), "count(*), coalesce(sum(m.message_count), 0)", "count(DISTINCT m.session_id), count(*)", 1)
	if rep.ByModel, err = s.usageRows(ctx, "model", `SELECT m.provider || ':' || m.model, m.model, `+msums+` FROM messages m JOIN sessions s ON s.id = m.session_id`+w+` AND m.model <> '' AND NOT (s.kind = 'fork' AND m.turn <= s.fork_turn) GROUP BY m.provider, m.model ORDER BY sum(m.cost_usd) DESC`, args...); err != nil {
		return nil, err
	}
	for _, r := range rep.BySession {
		rep.Total.Add(r.Usage)
	}
	return rep, nil
}

func (s *Store) usageRows(ctx context.Context, group, q string, args ...any) ([]loom.UsageRow, error) {
	rows, err := s.reader.QueryContext(ctx, q, args...)
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
	return out, rows.Err()
}
