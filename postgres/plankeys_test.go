package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom/internal/testkit/plantest"
	"github.com/loomhq/loom/postgres"
)

// TestHotQueriesPlannedOnKeys is sqlite's test of the same name on
// PostgreSQL: a store of tens of thousands of sessions and hundreds of
// thousands of messages (400 imported from Claude Code files, copied in
// SQL), with the statistics the store keeps itself (the server's
// autovacuum may be off: the store analyzes a table an import has
// doubled); the import, the hook's import, listings, references,
// searches and a recall run on it through a pool whose tracer records
// every statement;
// and each statement explained (EXPLAIN (FORMAT JSON), with the
// arguments it ran with) must not read sessions or messages whole, nor
// look for a key or a parent through an index that does not hold it.
// Then the key index is dropped, and the look-up by key must be caught.
func TestHotQueriesPlannedOnKeys(t *testing.T) {
	sessions := 20000
	if testing.Short() {
		sessions = 2000
	}
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(freshSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	rec := &plantest.Recorder{}
	cfg.ConnConfig.Tracer = pgRecorder{rec}
	st, err := postgres.OpenConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	files := filepath.Join(t.TempDir(), "claude")
	im, target := plantest.Import(t, st, files)
	conn := planConn(t, st)
	copies := sessions / plantest.Template
	execAll(t, conn,
		`CREATE TEMP TABLE t AS SELECT id FROM sessions`,
		`CREATE TEMP TABLE o AS SELECT max(id) AS off FROM bodies`,
		// Bodies are copied too, with their search vectors, so that a
		// search's plan meets a search index of the store's size.
		fmt.Sprintf(`INSERT INTO bodies (id, parts, content, search)
			SELECT b.id + k * o.off, b.parts, b.content, b.search FROM bodies b CROSS JOIN o CROSS JOIN generate_series(1, %d) k`, copies-1),
		`SELECT setval(pg_get_serial_sequence('bodies', 'id'), (SELECT max(id) FROM bodies))`,
		fmt.Sprintf(`INSERT INTO sessions (`+planCopyColumns+`)
			SELECT `+planCopySelect+` FROM sessions s JOIN t ON t.id = s.id CROSS JOIN generate_series(1, %d) k`, copies-1),
		fmt.Sprintf(`INSERT INTO messages (session_id, seq, id, role, turn, body_id, model, provider, input_tokens, output_tokens,
				cache_read_tokens, created_at, completed_at)
			SELECT m.session_id || '-' || k, m.seq, m.id || '-' || k, m.role, m.turn, m.body_id + k * o.off, m.model, m.provider,
				m.input_tokens, m.output_tokens, m.cache_read_tokens, m.created_at, m.completed_at
			FROM messages m JOIN t ON t.id = m.session_id CROSS JOIN o CROSS JOIN generate_series(1, %d) k`, copies-1),
		// The kept originals too, one file in four without a session (as
		// a file of several sessions, a database, is kept), so that a
		// chunk's look-up meets a table of the store's size.
		fmt.Sprintf(`INSERT INTO originals (user_id, path, off, size, tool, bundle, session_id, tail, mtime_ns, kept_at, data)
			SELECT o.user_id, o.path || '-' || k, o.off, o.size, o.tool, o.bundle || '-' || k,
				CASE WHEN k %% 4 = 0 THEN '' ELSE o.session_id || '-' || k END, o.tail, o.mtime_ns, o.kept_at, o.data
			FROM originals o CROSS JOIN generate_series(1, %d) k`, copies-1),
	)
	var nSessions, nMessages int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages)`).Scan(&nSessions, &nMessages); err != nil {
		t.Fatal(err)
	}
	if nSessions < sessions {
		t.Fatalf("%d sessions, want %d", nSessions, sessions)
	}
	t.Logf("%d sessions, %d messages", nSessions, nMessages)

	rec.Start()
	plantest.Workload(t, st, im, target, files)
	ran := rec.Stop()

	columns := func(index string) []string {
		rows, err := conn.Query(ctx, `SELECT pg_get_indexdef(i.indexrelid, k, true) FROM pg_index i, generate_series(1, i.indnatts) k
			WHERE i.indexrelid = $1::regclass ORDER BY k`, index)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return cols
	}
	explained, generic := 0, 0
	var bad []string
	for _, q := range ran {
		plan, err := explainRan(ctx, conn, q)
		if err != nil {
			continue // a statement of a temporary table, or one EXPLAIN cannot take
		}
		explained++
		if why := pgGrowing(q.SQL, plan, columns); why != "" {
			out, _ := json.Marshal(plan)
			bad = append(bad, fmt.Sprintf("%s\n\t%s\n\tplan: %s", why, plantest.OneLine(q.SQL), out))
		}
		// A statement the pool prepares runs on a generic plan after a
		// few runs, kept for the connection: the kept originals' look-ups
		// ran for a whole import on one made on an empty table.
		if !originalsRE.MatchString(q.SQL) {
			continue
		}
		if plan, err = explainGeneric(ctx, conn, q); err != nil {
			t.Fatalf("generic plan of %s: %v", plantest.OneLine(q.SQL), err)
		}
		generic++
		if why := pgGrowing(q.SQL, plan, columns); why != "" {
			out, _ := json.Marshal(plan)
			bad = append(bad, fmt.Sprintf("%s (generic plan)\n\t%s\n\tplan: %s", why, plantest.OneLine(q.SQL), out))
		}
	}
	if generic < 3 {
		t.Fatalf("only %d statements of the kept originals explained: the recording missed the import's", generic)
	}
	t.Logf("%d statements run, %d explained", len(ran), explained)
	if explained < 30 {
		t.Fatalf("only %d statements explained: the recording missed them", explained)
	}
	if len(bad) > 0 {
		t.Fatalf("%d statements walk what grows with the store:\n%s", len(bad), strings.Join(bad, "\n"))
	}

	execAll(t, conn, `DROP INDEX sessions_key_recent`)
	caught := false
	for _, q := range ran {
		if !keyEqualRE.MatchString(q.SQL) {
			continue
		}
		if plan, err := explainRan(ctx, conn, q); err == nil && pgGrowing(q.SQL, plan, columns) != "" {
			caught = true
		}
	}
	if !caught {
		t.Fatal("without sessions_key_recent, no look-up by key was caught")
	}

	// And without originals_unowned, the chunks' session given to those
	// of their bundle kept before it without one.
	execAll(t, conn, `DROP INDEX originals_unowned`, analyzeOwn)
	caught = false
	for _, q := range ran {
		if !bundleEqualRE.MatchString(q.SQL) {
			continue
		}
		if plan, err := explainGeneric(ctx, conn, q); err == nil && pgGrowing(q.SQL, plan, columns) != "" {
			caught = true
		}
	}
	if !caught {
		t.Fatal("without originals_unowned, no look-up of a bundle's chunks was caught")
	}
}

// explainGeneric returns the generic plan of q: the plan a statement
// prepared by the pool is run with once the server prefers one plan
// for every argument, as the pool's connections do after a few runs.
func explainGeneric(ctx context.Context, conn *pgx.Conn, q plantest.Statement) (planNode, error) {
	if _, err := conn.Exec(ctx, `PREPARE loom_generic AS `+q.SQL); err != nil {
		return planNode{}, err
	}
	defer conn.Exec(ctx, `DEALLOCATE loom_generic`)
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		return planNode{}, err
	}
	defer conn.Exec(ctx, `RESET plan_cache_mode`)
	// EXECUTE takes no parameters: each argument is written as a
	// literal of the type the statement gives it.
	var types []string
	if err := conn.QueryRow(ctx, `SELECT parameter_types::text[] FROM pg_prepared_statements WHERE name = 'loom_generic'`).Scan(&types); err != nil {
		return planNode{}, err
	}
	if len(types) != len(q.Args) {
		return planNode{}, fmt.Errorf("%d parameters, %d arguments", len(types), len(q.Args))
	}
	literals := make([]string, len(types))
	for i, typ := range types {
		if err := conn.QueryRow(ctx, `SELECT quote_nullable($1::`+typ+`) || '::`+typ+`'`, q.Args[i]).Scan(&literals[i]); err != nil {
			return planNode{}, err
		}
	}
	execute := `EXECUTE loom_generic`
	if len(literals) > 0 {
		execute += `(` + strings.Join(literals, ", ") + `)`
	}
	var out []byte
	if err := conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+execute).Scan(&out); err != nil {
		return planNode{}, err
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		return planNode{}, fmt.Errorf("explain output %s: %v", out, err)
	}
	return plans[0].Plan, nil
}

// planCopyColumns are the columns of sessions the copies of the
// template set, and planCopySelect what each is (s the template's row,
// k the copy): a new id and key, an older update time.
const planCopyColumns = `id, user_id, key, surface, title, description, kind, parent_id, fork_turn, project_id, project_name,
	project_root, cwd, model, provider, profile, message_count, turn_count, summary_seq, last_prompt, created_at, updated_at,
	source_tool, source_version, source_path`

const planCopySelect = `s.id || '-' || k, s.user_id, s.key || '-' || k, s.surface, s.title, s.description, s.kind,
	s.parent_id || '-' || k, s.fork_turn, s.project_id, s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile,
	s.message_count, s.turn_count, s.summary_seq, s.last_prompt, s.created_at, s.updated_at - k * interval '1 hour',
	s.source_tool, s.source_version, s.source_path || '-' || k`

// explainRan returns the plan of q, planned for the arguments it ran
// with.
func explainRan(ctx context.Context, conn *pgx.Conn, q plantest.Statement) (planNode, error) {
	var out []byte
	if err := conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+q.SQL, q.Args...).Scan(&out); err != nil {
		return planNode{}, err
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		return planNode{}, fmt.Errorf("explain output %s: %v", out, err)
	}
	return plans[0].Plan, nil
}

var (
	// keyEqualRE and parentEqualRE are a statement looking for a key or
	// a parent given as an argument.
	keyEqualRE    = regexp.MustCompile(`\b(?:\w+\.)?key = \$\d`)
	parentEqualRE = regexp.MustCompile(`\b(?:\w+\.)?parent_id = \$\d`)
	// originalsRE is a statement of the kept originals; pathEqualRE and
	// bundleEqualRE one looking for a file's chunks, or a bundle's, given
	// as an argument.
	originalsRE   = regexp.MustCompile(`\b(?:FROM|UPDATE|INTO) originals\b`)
	pathEqualRE   = regexp.MustCompile(`\bpath = \$\d`)
	bundleEqualRE = regexp.MustCompile(`\bbundle = \$\d`)
	// growingTables are those that grow with sessions and messages.
	growingTables = map[string]bool{"sessions": true, "messages": true, "bodies": true, "spans": true, "usage_slices": true, "originals": true}
)

// pgAllowed are the walks of what grows with the store that the store
// makes on purpose: a statement holding the first text whose plan reads
// the table second whole.
var pgAllowed = []struct{ sql, table, why string }{
	{"FROM originals o WHERE o.user_id = $1 AND ($2 = '' OR o.tool = $2)", "originals",
		"an import reads the records of every file of a tool it read in one query, so that an unchanged file costs a stat (import.md)"},
	{"b.search @@", "bodies",
		"the generated words are in a quarter to all of the bodies, where reading them all is the cheaper plan; TestSearchPlansUseIndex checks the search's plans on a vocabulary"},
	{"(SELECT count(*) FROM (SELECT FROM bodies LIMIT 10000) a)", "bodies",
		"the search's estimate of the bodies: at most 10,000 rows"},
	{"(CASE WHEN s.title ILIKE $1 OR s.description ILIKE $2 THEN 1.0 ELSE 0.0 END) AS score FROM sessions s WHERE s.deleted_at IS NULL AND s.user_id = $3", "sessions",
		"the search's title tier compares the words with every title of the user, as on SQLite (search.md)"},
}

// pgGrowing says why plan walks what grows with the store, "" when it
// does not.
func pgGrowing(q string, plan planNode, columns func(index string) []string) string {
	why := ""
	conds := map[string]bool{}
	allowed := func(table string) bool {
		for _, a := range pgAllowed {
			if a.table == table && strings.Contains(plantest.OneLine(q), a.sql) {
				return true
			}
		}
		return false
	}
	plan.walk(func(n planNode) {
		if n.NodeType == "Seq Scan" && growingTables[n.Relation] && why == "" && !allowed(n.Relation) {
			why = "a sequential scan of " + n.Relation
		}
		table := n.Relation
		if strings.HasPrefix(n.Index, "sessions_") {
			table = "sessions"
		} else if strings.HasPrefix(n.Index, "originals_") {
			table = "originals"
		}
		if n.Index == "" || (table != "sessions" && table != "originals") {
			return
		}
		// A probe for col: the index's columns up to col are all
		// equal to something. An index whose col comes after a column
		// the condition leaves free is walked over that column's values.
		for _, col := range columns(n.Index) {
			if !regexp.MustCompile(`\(` + col + ` = `).MatchString(n.IndexCond) {
				break
			}
			conds[table+"."+col] = true
		}
	})
	onOriginals := originalsRE.MatchString(q)
	switch {
	case why != "":
		return why
	case keyEqualRE.MatchString(q) && !conds["sessions.key"]:
		return "sessions walked to find a key"
	case parentEqualRE.MatchString(q) && !conds["sessions.parent_id"]:
		return "sessions walked to find a parent"
	case onOriginals && pathEqualRE.MatchString(q) && !conds["originals.path"]:
		return "the kept originals walked to find a file's chunks"
	case onOriginals && bundleEqualRE.MatchString(q) && !conds["originals.bundle"]:
		return "the kept originals walked to find a bundle's chunks"
	}
	return ""
}

// pgRecorder hands every statement a connection runs, alone or in a
// batch, to a plantest.Recorder.
type pgRecorder struct{ r *plantest.Recorder }

func (p pgRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	p.r.Add(d.SQL, d.Args)
	return ctx
}

func (pgRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (pgRecorder) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (p pgRecorder) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	p.r.Add(d.SQL, d.Args)
}

func (pgRecorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
