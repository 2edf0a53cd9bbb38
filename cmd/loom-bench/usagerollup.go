package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
)

// A roll-up table as a store could keep one: a row per user, quarter
// hour, surface, project, model and long-context flag, with the sums of
// its messages. The bench fills it once from UsageSlices and times the
// daily report read from it, to show what such a table would give; loom
// does not keep it (yet), so it stands for the design, not for loom.

const rollupTable = "bench_usage_rollup"

// rollupColumns are the table's columns, times in Unix nanoseconds so
// that one definition serves both engines.
const rollupColumns = `user_id, start_ns, first_ns, last_ns, surface, project_id, project_name, provider, model, long_context, messages,
	input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, cost_usd, api_calls, compactions`

// rollupDDL creates the table unless it is there.
const rollupDDL = `CREATE TABLE IF NOT EXISTS ` + rollupTable + ` (user_id TEXT NOT NULL, start_ns BIGINT NOT NULL, first_ns BIGINT NOT NULL,
	last_ns BIGINT NOT NULL, surface TEXT NOT NULL, project_id TEXT NOT NULL, project_name TEXT NOT NULL, provider TEXT NOT NULL,
	model TEXT NOT NULL, long_context BOOLEAN NOT NULL, messages BIGINT NOT NULL, input_tokens BIGINT NOT NULL,
	output_tokens BIGINT NOT NULL, reasoning_tokens BIGINT NOT NULL, cache_read_tokens BIGINT NOT NULL,
	cache_write_tokens BIGINT NOT NULL, cost_usd DOUBLE PRECISION NOT NULL, api_calls BIGINT NOT NULL, compactions BIGINT NOT NULL,
	PRIMARY KEY (user_id, start_ns, surface, project_id, provider, model, long_context))`

// rollupDB is what the roll-up is written and read through: one of
// database/sql and pgx, placeholders written as param makes them.
type rollupDB struct {
	exec func(ctx context.Context, q string, args ...any) error
	// each runs a query and calls row with the scan of each row.
	each  func(ctx context.Context, q string, args []any, row func(scan func(...any) error) error) error
	param func(i int) string
}

// fill writes the slices of user into the table, once.
func (db rollupDB) fill(ctx context.Context, user string, slices []loom.UsageSlice) error {
	if err := db.exec(ctx, rollupDDL); err != nil {
		return err
	}
	if err := db.exec(ctx, `DELETE FROM `+rollupTable); err != nil {
		return err
	}
	// 500 rows a statement: few round trips and commits, under both
	// engines' limits on parameters.
	for len(slices) > 0 {
		batch := slices[:min(500, len(slices))]
		slices = slices[len(batch):]
		var rows []string
		var args []any
		for _, s := range batch {
			ps := make([]string, 19)
			for i := range ps {
				ps[i] = db.param(len(args) + i + 1)
			}
			rows = append(rows, "("+strings.Join(ps, ", ")+")")
			u := s.Usage
			args = append(args, user, s.Start.UnixNano(), s.First.UnixNano(), s.Last.UnixNano(), s.Surface, s.ProjectID, s.ProjectName,
				s.Provider, s.Model, s.LongContext, s.Messages, u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens,
				u.CacheWriteTokens, u.CostUSD, u.APICalls, u.Compactions)
		}
		if err := db.exec(ctx, `INSERT INTO `+rollupTable+` (`+rollupColumns+`) VALUES `+strings.Join(rows, ", "), args...); err != nil {
			return err
		}
	}
	return nil
}

// UsageSlices reads the slices of f's user from the table, oldest first.
func (db rollupDB) UsageSlices(ctx context.Context, f loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	var out []loom.UsageSlice
	err := db.each(ctx, `SELECT `+rollupColumns+` FROM `+rollupTable+` WHERE user_id = `+db.param(1)+
		` ORDER BY start_ns, surface, project_id, provider, model, long_context`, []any{f.UserID}, func(scan func(...any) error) error {
		var s loom.UsageSlice
		var user string
		var start, first, last int64
		u := &s.Usage
		if err := scan(&user, &start, &first, &last, &s.Surface, &s.ProjectID, &s.ProjectName, &s.Provider, &s.Model, &s.LongContext,
			&s.Messages, &u.InputTokens, &u.OutputTokens, &u.ReasoningTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &u.CostUSD,
			&u.APICalls, &u.Compactions); err != nil {
			return err
		}
		s.Start, s.First, s.Last = time.Unix(0, start).UTC(), time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the roll-up: %w", err)
	}
	return out, nil
}

// sqlRollup is the roll-up in a database/sql database (SQLite).
func sqlRollup(db *sql.DB) rollupDB {
	return rollupDB{
		exec: func(ctx context.Context, q string, args ...any) error {
			_, err := db.ExecContext(ctx, q, args...)
			return err
		},
		each: func(ctx context.Context, q string, args []any, row func(scan func(...any) error) error) error {
			rows, err := db.QueryContext(ctx, q, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			return eachRow(rows, row)
		},
		param: func(int) string { return "?" },
	}
}

// pgRollup is the roll-up in PostgreSQL.
func pgRollup(conn *pgx.Conn) rollupDB {
	return rollupDB{
		exec: func(ctx context.Context, q string, args ...any) error {
			_, err := conn.Exec(ctx, q, args...)
			return err
		},
		each: func(ctx context.Context, q string, args []any, row func(scan func(...any) error) error) error {
			rows, err := conn.Query(ctx, q, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			return eachRow(rows, row)
		},
		param: func(i int) string { return fmt.Sprintf("$%d", i) },
	}
}

// eachRow calls row with the scan of each of rows, of either engine.
func eachRow(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
}, row func(scan func(...any) error) error) error {
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
