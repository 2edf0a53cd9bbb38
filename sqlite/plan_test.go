package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/loomhq/loom/internal/testkit/plantest"
)

// TestHotQueriesPlannedOnKeys builds a store of tens of thousands of
// sessions and hundreds of thousands of messages, without statistics
// (no ANALYZE: a user's store has none), runs the import (new files, a
// grown one, an unchanged re-run), the import hook (one file), the
// listings, lookups by reference, searches, a recall and the sync log's
// reads on it through a driver that records every statement, and
// checks the plan of each (EXPLAIN QUERY PLAN, with the arguments it
// ran with) for a walk of sessions or messages that grows with the
// store: a table scanned, or sessions walked by their user alone where
// the statement looks for a key, a parent or an id. A walk the store
// makes on purpose is listed in planAllowed with why. Then it drops the
// key index and checks that the import's look-up by key is caught.
func TestHotQueriesPlannedOnKeys(t *testing.T) {
	sessions := 20000
	if testing.Short() {
		sessions = 2000
	}
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	rec := tracing(t)
	st, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	// The template: sessions imported from Claude Code files, then
	// copied in SQL under new ids and keys up to the size wanted.
	files := filepath.Join(dir, "claude")
	im, target := plantest.Import(t, st, files)
	raw, err := sql.Open("sqlite", dsn(db, "_pragma=busy_timeout(30000)"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	copies := sessions / plantest.Template
	for _, stmt := range []string{
		`CREATE TEMP TABLE k (k INTEGER PRIMARY KEY)`,
		fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d) INSERT INTO k SELECT i FROM n`, copies-1),
		`CREATE TEMP TABLE t AS SELECT * FROM sessions`,
		`INSERT INTO sessions (` + planCopyColumns + `) SELECT ` + strings.ReplaceAll(planCopySelect, "$", "t.") + ` FROM temp.t t CROSS JOIN temp.k`,
		`INSERT INTO messages SELECT m.session_id || '-' || k.k, m.seq, m.id || '-' || k.k, m.role, m.turn, m.body_id, m.model, m.provider,
			m.input_tokens, m.output_tokens, m.reasoning_tokens, m.cache_read_tokens, m.cache_write_tokens, m.cost_usd, m.api_calls,
			m.compactions, m.error, m.created_at, m.completed_at, m.cache_write_1h_tokens
			FROM messages m JOIN temp.t t ON t.id = m.session_id CROSS JOIN temp.k`,
		// The kept originals too, one file in four without a session (as
		// a file of several sessions, a database, is kept).
		`INSERT INTO originals (user_id, path, off, size, tool, bundle, session_id, tail, mtime_ns, kept_at, data)
			SELECT o.user_id, o.path || '-' || k.k, o.off, o.size, o.tool, o.bundle || '-' || k.k,
				CASE WHEN k.k % 4 = 0 THEN '' ELSE o.session_id || '-' || k.k END, o.tail, o.mtime_ns, o.kept_at, o.data
			FROM originals o CROSS JOIN temp.k`,
	} {
		if _, err := raw.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%.80s…: %v", stmt, err)
		}
	}
	var nSessions, nMessages int
	raw.QueryRow(`SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages)`).Scan(&nSessions, &nMessages)
	if nSessions < sessions {
		t.Fatalf("%d sessions, want %d", nSessions, sessions)
	}
	t.Logf("%d sessions, %d messages", nSessions, nMessages)

	// What a user does: the import (new files, one grown, a re-run), the
	// hook's import of one file, listings, lookups, searches, a recall,
	// the sync log.
	rec.Start()
	plantest.Workload(t, st, im, target, files)
	if _, err := st.SyncHost(ctx); err != nil {
		t.Fatal(err)
	}
	last, err := st.SyncLast(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SyncLog(ctx, max(last-100, 0), 500); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SyncApplied(ctx); err != nil {
		t.Fatal(err)
	}
	ran := rec.Stop()

	explained := 0
	var bad []string
	for _, q := range ran {
		steps, err := explain(ctx, raw, q)
		if err != nil {
			continue // a statement of a temporary table, or one EXPLAIN cannot take
		}
		explained++
		if why := growing(q.SQL, steps); why != "" {
			bad = append(bad, fmt.Sprintf("%s\n\t%s\n\tplan: %s", why, plantest.OneLine(q.SQL), strings.Join(steps, " | ")))
		}
	}
	t.Logf("%d statements run, %d explained", len(ran), explained)
	if explained < 30 {
		t.Fatalf("only %d statements explained: the recording missed them", explained)
	}
	if len(bad) > 0 {
		t.Fatalf("%d statements walk what grows with the store:\n%s", len(bad), strings.Join(bad, "\n"))
	}

	// The check can fail: without the key index, the import's look-up
	// of a session by key walks every session of the user.
	if _, err := raw.ExecContext(ctx, `DROP INDEX sessions_key_recent`); err != nil {
		t.Fatal(err)
	}
	caught := false
	for _, q := range ran {
		if !strings.Contains(q.SQL, "s.key = ") {
			continue
		}
		if steps, err := explain(ctx, raw, q); err == nil && growing(q.SQL, steps) != "" {
			caught = true
		}
	}
	if !caught {
		t.Fatal("without sessions_key_recent, no look-up by key was caught")
	}

	// Nor, without originals_unowned, the chunks of a bundle kept before
	// its session was known, looked for to give them that session.
	if _, err := raw.ExecContext(ctx, `DROP INDEX originals_unowned`); err != nil {
		t.Fatal(err)
	}
	caught = false
	for _, q := range ran {
		if !strings.Contains(q.SQL, "bundle = ?") {
			continue
		}
		if steps, err := explain(ctx, raw, q); err == nil && growing(q.SQL, steps) != "" {
			caught = true
		}
	}
	if !caught {
		t.Fatal("without originals_unowned, no look-up of a bundle's chunks was caught")
	}
}

// planCopyColumns are the columns of sessions the template's copies
// set, and planCopySelect what each is ($ the template's row): a new id
// and key for each copy (k), an older update time.
const planCopyColumns = `id, user_id, key, surface, title, description, kind, parent_id, fork_turn, project_id, project_name,
	project_root, cwd, model, provider, profile, message_count, turn_count, summary_seq, last_prompt, created_at, updated_at,
	source_tool, source_version, source_path`

const planCopySelect = `$id || '-' || k.k, $user_id, $key || '-' || k.k, $surface, $title, $description, $kind,
	$parent_id || '-' || k.k, $fork_turn, $project_id, $project_name, $project_root, $cwd, $model, $provider, $profile,
	$message_count, $turn_count, $summary_seq, $last_prompt, $created_at,
	strftime('%Y-%m-%dT%H:%M:%fZ', $updated_at, '-' || k.k || ' hours'), $source_tool, $source_version, $source_path || '-' || k.k`

// planAllowed are the walks of what grows with the store that the store
// makes on purpose: a statement holding the first text whose plan holds
// the second.
var planAllowed = []struct{ sql, plan, why string }{
	// The log's last record: walked from its end (idx is the rowid),
	// it stops at the first.
	{"SELECT hlc FROM sync_log ORDER BY idx DESC LIMIT 1", "SCAN sync_log", "the newest record, read from the end"},
}

// growing says why the plan steps of statement q walk what grows with
// the store, "" when they do not.
func growing(q string, steps []string) string {
	// The names of subqueries and views the plan reads, not tables.
	inner := map[string]bool{}
	for _, step := range steps {
		if m := innerRE.FindStringSubmatch(step); m != nil {
			inner[m[1]] = true
		}
	}
	for _, step := range steps {
		allowed := false
		for _, a := range planAllowed {
			if strings.Contains(q, a.sql) && strings.Contains(step, a.plan) {
				allowed = true
			}
		}
		if allowed {
			continue
		}
		if m := scanRE.FindStringSubmatch(step); m != nil && !smallTables[m[1]] && !inner[m[1]] {
			return "a scan of " + m[1]
		}
		if m := originalsRE.FindStringSubmatch(step); m != nil {
			for _, col := range []string{"path", "bundle"} {
				if strings.Contains(q, " "+col+" = ?") && !strings.Contains(m[1], col+"=?") {
					return "the kept originals walked to find a " + col
				}
			}
		}
		if m := userOnlyRE.FindStringSubmatch(step); m != nil {
			for _, col := range []string{"key", "parent_id", "id"} {
				if regexp.MustCompile(`\b` + m[1] + `\.` + col + ` = (?:CAST\()?\?`).MatchString(q) {
					return "sessions walked by user to find a " + col
				}
			}
		}
	}
	return ""
}

var (
	// scanRE is a step that reads a whole table (or the whole of an
	// index of it), not a range of it.
	scanRE = regexp.MustCompile(`^SCAN (\w+)(?: USING (?:COVERING )?INDEX \w+)?$`)
	// userOnlyRE is a step that reads the sessions of a user (and
	// project) whole.
	userOnlyRE = regexp.MustCompile(`^SEARCH (\w+) USING (?:COVERING )?INDEX \w+ \(user_id=\?(?: AND project_id=\?)?\)$`)
	// originalsRE is a step that reads the kept originals through an
	// index, with the columns it probes.
	originalsRE = regexp.MustCompile(`^SEARCH originals USING (?:COVERING )?INDEX \w+ \((.*)\)$`)
	// innerRE names a subquery or a view the plan makes.
	innerRE = regexp.MustCompile(`^(?:CO-ROUTINE|MATERIALIZE) (\w+)$`)
	// smallTables are tables that do not grow with sessions or
	// messages: a row per AUTOINCREMENT table, a row per other host.
	smallTables = map[string]bool{"sqlite_sequence": true, "sync_applied": true, "sync_hosts": true}
)

// explain returns the steps of q's plan on db, with the arguments it
// ran with.
func explain(ctx context.Context, db *sql.DB, q plantest.Statement) ([]string, error) {
	rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q.SQL, q.Args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		steps = append(steps, detail)
	}
	return steps, rows.Err()
}

var registerRecording sync.Once

// theRecorder is the recording driver's.
var theRecorder = &plantest.Recorder{}

// tracing makes the stores the test opens go through a driver that
// records their statements (Recorder.Start), until the test ends. The
// test must not be parallel: the driver's name is the package's.
func tracing(t *testing.T) *plantest.Recorder {
	registerRecording.Do(func() {
		// The driver registered as "sqlite", with the store's functions.
		db, err := sql.Open("sqlite", ":memory:")
		if err != nil {
			t.Fatal(err)
		}
		sql.Register("sqlite-recorded", recordingDriver{db.Driver(), theRecorder})
		db.Close()
	})
	old := driverName
	driverName = "sqlite-recorded"
	t.Cleanup(func() { driverName = old })
	return theRecorder
}

type recordingDriver struct {
	d driver.Driver
	r *plantest.Recorder
}

func (d recordingDriver) Open(name string) (driver.Conn, error) {
	c, err := d.d.Open(name)
	if err != nil {
		return nil, err
	}
	return recordingConn{c, d.r}, nil
}

type recordingConn struct {
	driver.Conn
	r *plantest.Recorder
}

func (c recordingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return recordingStmt{s, query, c.r}, nil
}

func (c recordingConn) BeginTx(ctx context.Context, o driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, o)
}

func (c recordingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.r.Add(query, values(args))
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c recordingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.r.Add(query, values(args))
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (c recordingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c recordingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

type recordingStmt struct {
	driver.Stmt
	query string
	r     *plantest.Recorder
}

func (s recordingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.r.Add(s.query, values(args))
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s recordingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.r.Add(s.query, values(args))
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}

// values are the values of args, in order.
func values(args []driver.NamedValue) []any {
	v := make([]any, len(args))
	for i, a := range args {
		v[i] = a.Value
	}
	return v
}
