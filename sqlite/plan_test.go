package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/recall"
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
	// The template: 400 sessions imported from Claude Code files, then
	// copied in SQL under new ids and keys up to the size wanted.
	files := filepath.Join(dir, "claude")
	const template = 400
	for i := range template {
		writeClaudeSession(t, files, i, 4)
	}
	im := &importer.Importer{Store: st, UserID: "alice"}
	target := []importer.Target{{Format: claudecode.Format{}, Roots: []string{files}, Explicit: true}}
	if _, err := im.Run(ctx, target); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", dsn(db, "_pragma=busy_timeout(30000)"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	copies := sessions / template
	for _, stmt := range []string{
		`CREATE TEMP TABLE k (k INTEGER PRIMARY KEY)`,
		fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d) INSERT INTO k SELECT i FROM n`, copies-1),
		`CREATE TEMP TABLE t AS SELECT * FROM sessions`,
		`INSERT INTO sessions (` + planCopyColumns + `) SELECT ` + strings.ReplaceAll(planCopySelect, "$", "t.") + ` FROM temp.t t CROSS JOIN temp.k`,
		`INSERT INTO messages SELECT m.session_id || '-' || k.k, m.seq, m.id || '-' || k.k, m.role, m.turn, m.body_id, m.model, m.provider,
			m.input_tokens, m.output_tokens, m.reasoning_tokens, m.cache_read_tokens, m.cache_write_tokens, m.cost_usd, m.api_calls,
			m.compactions, m.error, m.created_at, m.completed_at, m.cache_write_1h_tokens
			FROM messages m JOIN temp.t t ON t.id = m.session_id CROSS JOIN temp.k`,
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
	rec.start()
	for i := template; i < template+3; i++ {
		writeClaudeSession(t, files, i, 3)
	}
	writeClaudeSession(t, files, 7, 6) // grown
	if _, err := im.Run(ctx, target); err != nil {
		t.Fatal(err)
	}
	if _, err := im.Run(ctx, target); err != nil {
		t.Fatal(err)
	}
	writeClaudeSession(t, files, 8, 7)
	hook := []importer.Target{{Format: claudecode.Format{}, Roots: []string{filepath.Join(files, "-home-dev-projects-p08", planSessionID(8)+".jsonl")}, Explicit: true}}
	if _, err := im.Run(ctx, hook); err != nil {
		t.Fatal(err)
	}
	list, err := st.Sessions(ctx, loom.SessionFilter{UserID: "alice", Limit: 50})
	if err != nil || len(list) != 50 {
		t.Fatalf("list: %d, %v", len(list), err)
	}
	one := list[0]
	for _, f := range []loom.SessionFilter{
		{UserID: "alice", Limit: 50, Before: &loom.Cursor{UpdatedAt: list[49].UpdatedAt, ID: list[49].ID}},
		{UserID: "alice", ProjectID: one.Project.ID, Limit: 50},
		{UserID: "alice", Key: one.Key, Limit: 10, Archived: loom.WithArchived},
		{UserID: "alice", ParentID: one.ID, Limit: 50},
		{UserID: "alice", Text: "zyzzogeton", Limit: 50},
	} {
		if _, err := st.Sessions(ctx, f); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Summaries(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	for _, ref := range []string{one.ID, one.ID[:8], one.Key, one.Title} {
		st.Resolve(ctx, ref, loom.ResolveScope{UserID: "alice", ProjectID: one.Project.ID})
	}
	if _, err := st.Messages(ctx, one.ID, loom.MessageQuery{Limit: 50}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []loom.SearchQuery{
		{Text: "zyzzogeton", UserID: "alice"},
		{Text: "session store index", UserID: "alice"},
		{Text: "session store index", UserID: "alice", ProjectID: one.Project.ID},
		{Text: "fork", UserID: "alice", SessionID: one.ID},
	} {
		if _, err := st.Search(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := recall.Recall(ctx, st, recall.Options{Prompt: "how does the store index a session", UserID: "alice", ProjectID: one.Project.ID}); err != nil {
		t.Fatal(err)
	}
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
	ran := rec.stop()

	explained := 0
	var bad []string
	for _, q := range ran {
		steps, err := explain(ctx, raw, q)
		if err != nil {
			continue // a statement of a temporary table, or one EXPLAIN cannot take
		}
		explained++
		if why := growing(q.sql, steps); why != "" {
			bad = append(bad, fmt.Sprintf("%s\n\t%s\n\tplan: %s", why, oneLine(q.sql), strings.Join(steps, " | ")))
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
		if !strings.Contains(q.sql, "s.key = ") {
			continue
		}
		if steps, err := explain(ctx, raw, q); err == nil && growing(q.sql, steps) != "" {
			caught = true
		}
	}
	if !caught {
		t.Fatal("without sessions_key_recent, no look-up by key was caught")
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
	// innerRE names a subquery or a view the plan makes.
	innerRE = regexp.MustCompile(`^(?:CO-ROUTINE|MATERIALIZE) (\w+)$`)
	// smallTables are tables that do not grow with sessions or
	// messages: a row per AUTOINCREMENT table, a row per other host.
	smallTables = map[string]bool{"sqlite_sequence": true, "sync_applied": true, "sync_hosts": true}
)

// explain returns the steps of q's plan on db, with the arguments it
// ran with.
func explain(ctx context.Context, db *sql.DB, q statement) ([]string, error) {
	rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q.sql, q.args...)
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

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// planSessionID is the Claude Code session id of the i-th generated
// session.
func planSessionID(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// writeClaudeSession writes (or rewrites, longer) the i-th Claude Code
// session under dir with turns turns, in one of 20 projects, and returns
// its path. One session in 97 holds a rare word.
func writeClaudeSession(t *testing.T, dir string, i, turns int) string {
	t.Helper()
	project := fmt.Sprintf("p%02d", i%20)
	cwd := "/home/dev/projects/" + project
	sid := planSessionID(i)
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
	var b strings.Builder
	parent := "null"
	line := func(n int, typ string, message any) {
		id := fmt.Sprintf("%08d-0000-4000-8000-%012d", i, n)
		m, _ := json.Marshal(message)
		fmt.Fprintf(&b, `{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":%q,"sessionId":%q,"version":"2.1.39","type":%q,"message":%s,"uuid":%q,"timestamp":%q}`+"\n",
			parent, cwd, sid, typ, m, id, at.Add(time.Duration(n)*time.Second).Format("2006-01-02T15:04:05.000Z"))
		parent = `"` + id + `"`
	}
	rare := ""
	if i%97 == 0 {
		rare = " zyzzogeton"
	}
	for turn := range turns {
		call := fmt.Sprintf("toolu_%08d%04d", i, turn)
		line(4*turn, "user", map[string]any{"role": "user", "content": fmt.Sprintf("how does the store index session %d turn %d%s", i, turn, rare)})
		line(4*turn+1, "assistant", map[string]any{"model": "claude-sonnet-4-5", "id": "msg_a" + call, "type": "message", "role": "assistant",
			"content": []any{map[string]any{"type": "text", "text": "reading the search index of the fork"},
				map[string]any{"type": "tool_use", "id": call, "name": "Read", "input": map[string]string{"file_path": cwd + "/store.go"}}},
			"stop_reason": "tool_use", "usage": map[string]int{"input_tokens": 10, "output_tokens": 20}})
		line(4*turn+2, "user", map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": call, "content": "package store // the session index"}}})
		line(4*turn+3, "assistant", map[string]any{"model": "claude-sonnet-4-5", "id": "msg_b" + call, "type": "message", "role": "assistant",
			"content": []any{map[string]any{"type": "text", "text": "the store keeps one row a message"}}, "stop_reason": "end_turn",
			"usage": map[string]int{"input_tokens": 12, "output_tokens": 30}})
	}
	p := filepath.Join(dir, "-home-dev-projects-"+project, sid+".jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// statement is a statement the store ran, with its arguments.
type statement struct {
	sql  string
	args []any
}

// recorder keeps the statements run through the recording driver while
// it is started, each text once (with the arguments of its first run).
type recorder struct {
	mu   sync.Mutex
	on   bool
	seen map[string]bool
	ran  []statement
}

func (r *recorder) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on, r.seen, r.ran = true, map[string]bool{}, nil
}

func (r *recorder) stop() []statement {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return slices.Clone(r.ran)
}

func (r *recorder) add(query string, args []driver.NamedValue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.on || r.seen[query] {
		return
	}
	head := strings.ToUpper(strings.TrimSpace(query))
	if !strings.HasPrefix(head, "SELECT") && !strings.HasPrefix(head, "WITH") && !strings.HasPrefix(head, "UPDATE") &&
		!strings.HasPrefix(head, "DELETE") && !strings.HasPrefix(head, "INSERT") && !strings.HasPrefix(head, "REPLACE") {
		return
	}
	r.seen[query] = true
	vals := make([]any, len(args))
	for i, a := range args {
		vals[i] = a.Value
	}
	r.ran = append(r.ran, statement{query, vals})
}

var registerRecording sync.Once

// theRecorder is the recording driver's.
var theRecorder = &recorder{}

// tracing makes the stores the test opens go through a driver that
// records their statements (recorder.start), until the test ends. The
// test must not be parallel: the driver's name is the package's.
func tracing(t *testing.T) *recorder {
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
	r *recorder
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
	r *recorder
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
	c.r.add(query, args)
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c recordingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.r.add(query, args)
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
	r     *recorder
}

func (s recordingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.r.add(s.query, args)
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s recordingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.r.add(s.query, args)
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}
