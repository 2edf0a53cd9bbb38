package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
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
	if err := usageRows(ctx, rep, "SQLite", st, daily, runs, func() error {
		rows, err := st.DB().QueryContext(ctx, usageBaselineSQL(`substr(m.created_at, 1, 10)`))
		if err != nil {
			return err
		}
		for rows.Next() {
		}
		rows.Close()
		return rows.Err()
	}); err != nil {
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
		if err := analyzeSchema(ctx, conn); err != nil {
			return err
		}
		total, _ = pq(`SELECT count(*) FROM messages`)
		if err := usageRows(ctx, rep, "PostgreSQL", pst, daily, runs, func() error {
			rows, err := conn.Query(ctx, usageBaselineSQL(`to_char(m.created_at, 'YYYY-MM-DD')`))
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		}); err != nil {
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

// usageRows times, on one engine: the first report after the store was
// generated (which brings every session into the roll-up, once), the
// daily report over the whole history beside base, and the report right
// after one more turn, which brings that turn in first.
func usageRows(ctx context.Context, rep *report, engine string, st interface {
	usagereport.Slicer
	loom.Engine
}, daily func(usagereport.Slicer) func() error, runs int, base func() error) error {
	t0 := time.Now()
	if err := daily(st)(); err != nil {
		return err
	}
	first := time.Since(t0)
	rep.add(measure(engine+": daily usage report over the whole history", "≤ 100 ms", 100, runs, daily(st), base))
	// A session of the generated history, one more turn each run.
	ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: "bench", Limit: 1})
	if err != nil || len(ss) == 0 {
		return fmt.Errorf("a session to add turns to: %v", err)
	}
	s := ss[0]
	turn := func() (func() error, error) {
		q := &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "one more question"}}}
		a := &loom.Message{Role: loom.RoleAssistant, Provider: "anthropic", Model: "claude-sonnet-4-5",
			Parts: []loom.Part{{Type: loom.PartText, Text: "one more answer"}},
			Usage: loom.Usage{InputTokens: 1200, OutputTokens: 300, CacheReadTokens: 9000, APICalls: 1}}
		if err := st.Append(ctx, s, q, a); err != nil {
			return nil, err
		}
		return daily(st), nil
	}
	r := measureEach(engine+": the same report right after one more turn (appended untimed)", "≤ 100 ms", 100, runs, turn,
		func() (func() error, error) { return base, nil })
	r.note = fmt.Sprintf("the first report after the store was generated, which sums every session into the roll-up once, took %.0f ms", ms(first))
	rep.add(r)
	return usageLive(ctx, rep, engine, st, daily, runs, base)
}

// usageAgentFiles is how many Claude Code session files the live import
// before a report finds unchanged: a heavy user's history.
const usageAgentFiles = 2000

// usageLive times the report as loom usage makes it: the import of what
// the agents wrote since the last import first (here nothing: every one
// of usageAgentFiles Claude Code files was imported before, untimed),
// then the daily report.
func usageLive(ctx context.Context, rep *report, engine string, st interface {
	usagereport.Slicer
	loom.Engine
}, daily func(usagereport.Slicer) func() error, runs int, base func() error) error {
	root, err := os.MkdirTemp("", "loom-bench-agents-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	for i := range usageAgentFiles {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		day := time.Date(2026, 10, 1+i%28, 9, 0, 0, 0, time.UTC).Format("2006-01-02T15:04:05.000Z")
		lines := fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"type":"user","cwd":"/home/u/p%[3]d","sessionId":"%[1]s","version":"2.1.62","message":{"role":"user","content":"question %[3]d"},"uuid":"u-%[1]s","timestamp":"%[2]s"}
{"parentUuid":"u-%[1]s","isSidechain":false,"type":"assistant","cwd":"/home/u/p%[3]d","sessionId":"%[1]s","version":"2.1.62","message":{"model":"claude-sonnet-4-5","id":"msg_%[3]d","type":"message","role":"assistant","content":[{"type":"text","text":"answer %[3]d"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":40}},"requestId":"req_%[3]d","uuid":"a-%[1]s","timestamp":"%[2]s"}
`, id, day, i)
		dir := filepath.Join(root, fmt.Sprintf("-home-u-p%d", i%50))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(lines), 0o600); err != nil {
			return err
		}
	}
	im := &importer.Importer{Store: st, UserID: "bench", Price: pricing.Cost}
	targets := []importer.Target{{Format: claudecode.Format{}, Roots: []string{root}}}
	if _, err := im.Run(ctx, targets); err != nil {
		return err
	}
	live := func() error {
		r, err := im.Run(ctx, targets)
		if err != nil {
			return err
		}
		if r.Changed() {
			return fmt.Errorf("the live import found something new in unchanged files")
		}
		return daily(st)()
	}
	r := measure(fmt.Sprintf("%s: the same report with the live import first (nothing new in %d agent files)", engine, usageAgentFiles),
		"≤ 100 ms", 100, runs, live, base)
	r.note = "loadavg " + loadAvg()
	rep.add(r)
	return nil
}

// loadAvg is the machine's load averages as /proc/loadavg gives them,
// "unknown" where there is none.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
