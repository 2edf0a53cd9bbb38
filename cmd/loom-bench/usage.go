package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/pricing"
	usagereport "github.com/loomhq/loom/report"
	"github.com/loomhq/loom/sqlite"
)

// usageSchema is the schema of PostgreSQL that -usage generates its
// store into once and reuses.
const usageSchema = "loombench_usage"

// usageMain measures the daily usage report (usagereport.Build by day, over
// the whole history) on a store of n messages, on SQLite (usage.db in
// dir) and on PostgreSQL (schema loombench_usage of server, skipped when
// server is empty). Each store is generated once, out of the timing,
// and reused by later runs: sessions of 100 messages over 50 projects,
// half of them replies with usage, about a month of history.
func usageMain(ctx context.Context, out string, dir, server string, n, runs int) error {
	rep := &report{}
	user := "bench"
	daily := func(st usagereport.Slicer) func() error {
		return func() error {
			r, err := usagereport.Build(ctx, st, usagereport.Options{UserID: user, By: usagereport.Day, Location: time.UTC})
			if err == nil && len(r.Rows) == 0 {
				err = fmt.Errorf("the daily report is empty")
			}
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "usage.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	sq := func(q string) (int, error) { return number(st.DB().QueryRowContext(ctx, q)) }
	if err := usageFill(ctx, st, sq, n, "sqlite"); err != nil {
		return err
	}
	if _, err := st.DB().ExecContext(ctx, `ANALYZE`); err != nil {
		return err
	}
	total, _ := sq(`SELECT count(*) FROM messages`)
	rep.add(measure("SQLite: daily usage report over the whole history", "≤ 100 ms", 100, runs, daily(st),
		func() error {
			rows, err := st.DB().QueryContext(ctx, usageBaselineSQL(`substr(m.created_at, 1, 10)`))
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			rows.Close()
			return rows.Err()
		}))
	// What a roll-up table would leave: the report made from the
	// slices already read, as if a table held them.
	held, err := st.UsageSlices(ctx, loom.UsageSliceFilter{UserID: user, LongContext: pricing.LongContextTokens})
	if err != nil {
		return err
	}
	rep.add(measure(fmt.Sprintf("the same report from its %d quarter-hour slices held in memory", len(held)), "", 0, runs,
		daily(heldSlices(held)), daily(heldSlices(held))))
	if err := rollupRow(ctx, rep, "SQLite", sqlRollup(st.DB()), st, daily, runs); err != nil {
		return err
	}
	scale := fmt.Sprintf("SQLite %d messages", total)
	if server != "" {
		u, err := schemaURL(server, usageSchema)
		if err != nil {
			return err
		}
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			return fmt.Errorf("PostgreSQL at %s: %w", redact(server), err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{usageSchema}.Sanitize()); err != nil {
			return err
		}
		pst, err := postgres.Open(ctx, u)
		if err != nil {
			return err
		}
		defer pst.Close()
		pq := func(q string) (int, error) { return number(conn.QueryRow(ctx, q)) }
		if err := usageFill(ctx, pst, pq, n, "postgres"); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, `ANALYZE`); err != nil {
			return err
		}
		total, _ = pq(`SELECT count(*) FROM messages`)
		rep.add(measure("PostgreSQL: daily usage report over the whole history", "≤ 100 ms", 100, runs, daily(pst),
			func() error {
				rows, err := conn.Query(ctx, usageBaselineSQL(`to_char(m.created_at, 'YYYY-MM-DD')`))
				if err != nil {
					return err
				}
				rows.Close()
				return rows.Err()
			}))
		if err := rollupRow(ctx, rep, "PostgreSQL", pgRollup(conn), pst, daily, runs); err != nil {
			return err
		}
		scale += fmt.Sprintf(", PostgreSQL %d messages (schema %s)", total, usageSchema)
	}
	rep.scale = fmt.Sprintf("%s, in sessions of 100 over 50 projects, one message in two with usage; %s, %d cores, %s",
		scale, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	rep.addNote("The baseline is one GROUP BY over loom's messages table by day, written by hand: the least a report that reads every message costs.")
	return rep.print(out)
}

// usageFill generates n messages into st unless it holds some already;
// count runs a query of one number.
func usageFill(ctx context.Context, st interface {
	Import(context.Context, []*loom.SessionData) error
}, count func(q string) (int, error), n int, what string) error {
	have, err := count(`SELECT count(*) FROM (SELECT 1 FROM sessions LIMIT 1) s`)
	if err != nil {
		return err
	}
	if have > 0 {
		fmt.Fprintf(os.Stderr, "%s: reusing the generated store (remove it to regenerate)\n", what)
		return nil
	}
	t0 := time.Now()
	if err := generateSessions(newGenerator(1), n/100, 100, benchProjects(), " ("+what+")", func(batch []*loom.SessionData) error {
		return st.Import(ctx, batch)
	}); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: %d messages generated in %.0f s\n", what, n, time.Since(t0).Seconds())
	return nil
}

// usageBaselineSQL sums every message's tokens and cost per day by
// hand, the day being the expression day of m.created_at.
func usageBaselineSQL(day string) string {
	return `SELECT ` + day + `, sum(m.input_tokens), sum(m.output_tokens), sum(m.cache_read_tokens),
		sum(m.cache_write_tokens), sum(m.cost_usd), count(*)
		FROM messages m JOIN sessions s ON s.id = m.session_id WHERE s.user_id = 'bench' AND s.deleted_at IS NULL GROUP BY 1 ORDER BY 1`
}

// number reads a row of one number.
func number(row interface{ Scan(dest ...any) error }) (int, error) {
	var x int
	err := row.Scan(&x)
	return x, err
}

// heldSlices is a report's source that has its slices already.
type heldSlices []loom.UsageSlice

func (h heldSlices) UsageSlices(context.Context, loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	return h, nil
}

// rollupRow fills a roll-up table from st's slices, out of the timing,
// and times the daily report read from it.
func rollupRow(ctx context.Context, rep *report, engine string, db rollupDB, st usagereport.Slicer,
	daily func(usagereport.Slicer) func() error, runs int) error {
	slices, err := st.UsageSlices(ctx, loom.UsageSliceFilter{UserID: "bench", LongContext: pricing.LongContextTokens})
	if err != nil {
		return err
	}
	if err := db.fill(ctx, "bench", slices); err != nil {
		return err
	}
	rep.add(measure(engine+": the daily report read from a roll-up table of its slices (the bench's, not loom's)", "≤ 100 ms", 100, runs,
		daily(db), daily(db)))
	return nil
}
