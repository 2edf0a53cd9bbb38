package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/postgres"
)

// planFixture fills a fresh store with 40,000 messages in 400 sessions of
// 100 (two users, 20 projects), words drawn from a small vocabulary so
// that some are in most messages, a rare word in four, and fresh
// statistics: enough rows that the planner's choice is made on costs,
// as on a real store.
func planFixture(t *testing.T) (*postgres.Store, string) {
	t.Helper()
	st := open(t, freshSchema(t))
	var vocab []string
	for _, w := range strings.Fields(`the of and to session message agent model tool search index store write read fork
		project memory context token cost usage append stream reply user assistant summary resume picker terminal server
		query engine table column value result error status running completed process lock host file function config
		database request response build test deploy review branch commit merge change update package module import export
		handler router client cache queue worker schedule retry timeout limit parser lexer syntax grammar compile runtime
		pointer slice channel goroutine mutex encode decode buffer reader writer socket network address port protocol
		header payload migration schema constraint trigger transaction rollback savepoint checkpoint vacuum analyze
		kubernetes container image volume secret namespace cluster replica service ingress gateway proxy latency
		throughput benchmark profile trace metric alert dashboard panel widget layout render style button input form
		field label modal dialog toast banner footer sidebar navbar carousel accordion algorithm heuristic optimization
		gradient tensor matrix vector scalar embedding attention transformer mountain river forest valley ocean island`) {
		vocab = append(vocab, "'"+w+"'")
	}
	ctx := context.Background()
	conn, err := st.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// One connection, so that setseed makes the same words every run.
	execAll(t, conn, `SELECT setseed(0.42)`,
		`INSERT INTO sessions (id, user_id, key, surface, project_id, title, created_at, updated_at)
			SELECT format('s%05s', i), CASE WHEN i % 10 = 0 THEN 'bob' ELSE 'alice' END, 'cli:' || i, 'cli',
				'p' || (i % 20), 'session ' || i, timestamptz '2026-01-01', timestamptz '2026-01-01' + i * interval '1 hour'
			FROM generate_series(1, 400) i`,
		`INSERT INTO bodies (id, content)
			SELECT i, (SELECT string_agg(w[g * 0 + 1 + floor(power(random(), 3) * array_length(w, 1))::int], ' ')
				FROM generate_series(1, 30 + i % 20) g) || CASE WHEN i % 9973 = 0 THEN ' zyzzogeton' ELSE '' END
			FROM generate_series(1, 40000) i, (SELECT ARRAY[`+strings.Join(vocab, ",")+`]) v(w)`,
		`INSERT INTO messages (session_id, seq, id, role, turn, body_id, created_at)
			SELECT format('s%05s', 1 + (i - 1) / 100), 1 + (i - 1) % 100, 'm' || i,
				CASE WHEN i % 2 = 1 THEN 'user' ELSE 'assistant' END, 1 + (i - 1) % 100 / 2, i,
				timestamptz '2026-01-01' + i * interval '1 minute'
			FROM generate_series(1, 40000) i`,
		analyzeOwn)
	return st, "s00042"
}

// execAll runs stmts on conn in turn.
func execAll(t *testing.T, conn interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, stmts ...string) {
	t.Helper()
	for _, stmt := range stmts {
		if _, err := conn.Exec(context.Background(), stmt); err != nil {
			t.Fatalf("%.60s…: %v", stmt, err)
		}
	}
}

// planConn returns a connection of its own to st's schema, closed when
// the test ends: plans are explained on it.
func planConn(t *testing.T, st *postgres.Store) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, st.Pool().Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return conn
}

// analyzeOwn analyzes the tables of the connection's schema only: a
// bare ANALYZE reads every table of the database, and would change the
// plans of the tests running beside in schemas of their own.
const analyzeOwn = `DO $$DECLARE t text; BEGIN
	FOR t IN SELECT format('%I.%I', schemaname, relname) FROM pg_stat_user_tables WHERE schemaname = current_schema() LOOP
		EXECUTE 'ANALYZE ' || t;
	END LOOP;
END$$`

// planNode is a node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType string `json:"Node Type"`
	Relation string `json:"Relation Name"`
	Index    string `json:"Index Name"`
	Filter   string `json:"Filter"`
	// IndexCond is the condition an index is read with.
	IndexCond string     `json:"Index Cond"`
	Loops     float64    `json:"Actual Loops"`
	Plans     []planNode `json:"Plans"`
}

func (n planNode) walk(fn func(planNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}

// checkPlan fails unless the plan finds messages through the search
// index: a bitmap scan of bodies_search, bodies read by that scan or by
// id, messages only by their body (messages_body), sessions only by an
// index, and nothing read whole.
func checkPlan(t *testing.T, name string, plan planNode) {
	t.Helper()
	var gin bool
	var bad []string
	plan.walk(func(n planNode) {
		switch {
		case n.NodeType == "Bitmap Index Scan" && n.Index == "bodies_search":
			gin = true
		case n.NodeType == "Seq Scan":
			bad = append(bad, "a sequential scan of "+n.Relation)
		case n.Relation == "messages" && n.Index != "messages_body":
			bad = append(bad, fmt.Sprintf("messages read by %s %s", n.NodeType, n.Index))
		case n.Relation == "bodies" && n.NodeType != "Bitmap Heap Scan" && n.Index != "bodies_pkey":
			bad = append(bad, fmt.Sprintf("bodies read by %s %s", n.NodeType, n.Index))
		case n.NodeType == "Bitmap Index Scan" && n.Index != "bodies_search":
			bad = append(bad, "a bitmap scan of "+n.Index)
		}
	})
	if !gin {
		bad = append(bad, "no scan of the search index")
	}
	if len(bad) > 0 {
		t.Errorf("%s: %s", name, strings.Join(bad, "; "))
	}
}

// explain returns the plan of sql with args: as the store sends it (an
// unnamed statement, planned for its arguments), or with generic set, the
// plan PostgreSQL would keep for any arguments of a prepared statement.
func explain(t *testing.T, conn *pgx.Conn, sql string, args []any, generic bool) planNode {
	t.Helper()
	ctx := context.Background()
	var out []byte
	if !generic {
		if err := conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...).Scan(&out); err != nil {
			t.Fatalf("explain: %v", err)
		}
	} else {
		if _, err := conn.Prepare(ctx, "loom_search", sql); err != nil {
			t.Fatalf("prepare: %v", err)
		}
		defer conn.Deallocate(ctx, "loom_search")
		quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
		lits := make([]string, len(args))
		for i, a := range args {
			switch a := a.(type) {
			case string:
				lits[i] = quote(a)
			case []string:
				for j := range a {
					a[j] = quote(a[j])
				}
				lits[i] = "ARRAY[" + strings.Join(a, ", ") + "]::text[]"
			case time.Time:
				lits[i] = "'" + a.UTC().Format(time.RFC3339Nano) + "'"
			default:
				t.Fatalf("argument %d is a %T", i, a)
			}
		}
		if err := conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) EXECUTE loom_search(`+strings.Join(lits, ", ")+`)`).Scan(&out); err != nil {
			t.Fatalf("explain: %v", err)
		}
	}
	return readPlan(t, out)
}

// readPlan returns the plan of EXPLAIN (FORMAT JSON)'s output.
func readPlan(t *testing.T, out []byte) planNode {
	t.Helper()
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("explain output %s: %v", out, err)
	}
	return plans[0].Plan
}

// Every shape of search finds its matches through the GIN index on
// bodies.search, whatever filters it has, and whether PostgreSQL plans
// it for its arguments or once for any: a filter must not make the
// planner start from a session's or a project's messages and test each
// against the query, which took seconds for a word in no message.
func TestSearchPlansUseIndex(t *testing.T) {
	t.Parallel()
	st, session := planFixture(t)
	ctx := context.Background()
	conn := planConn(t, st)
	day := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	shapes := []struct {
		name string
		q    loom.SearchQuery
	}{
		{"a word in no message", loom.SearchQuery{Text: "nowordlikethis"}},
		{"a rare word", loom.SearchQuery{Text: "zyzzogeton"}},
		{"several words", loom.SearchQuery{Text: "zyzzogeton mountain river"}},
		{"a phrase", loom.SearchQuery{Text: `"zyzzogeton mountain"`}},
		{"words and phrases", loom.SearchQuery{Text: `zyzzogeton "session model" "the index"`}},
		{"a user", loom.SearchQuery{Text: "zyzzogeton", UserID: "alice"}},
		{"a project", loom.SearchQuery{Text: "zyzzogeton", UserID: "alice", ProjectID: "p3"}},
		{"a surface", loom.SearchQuery{Text: "zyzzogeton", UserID: "alice", Surface: "cli"}},
		{"a role", loom.SearchQuery{Text: "zyzzogeton", UserID: "alice", Role: "user"}},
		{"a session", loom.SearchQuery{Text: "nowordlikethis", UserID: "alice", SessionID: session}},
		{"a time range", loom.SearchQuery{Text: "zyzzogeton", UserID: "alice", Since: day, Until: day.Add(24 * time.Hour)}},
		{"every filter", loom.SearchQuery{Text: "zyzzogeton", UserID: "alice", ProjectID: "p2", Surface: "cli", Role: "assistant",
			SessionID: session, Since: day, Until: day.Add(24 * time.Hour), Archived: true}},
		{"a raw query", loom.SearchQuery{Text: "zyzzogeton & !mountain", Raw: true, UserID: "alice"}},
		{"a raw phrase", loom.SearchQuery{Text: "zyzzogeton <-> river", Raw: true, UserID: "alice", ProjectID: "p3"}},
	}
	for _, tc := range shapes {
		terms, err := tc.q.Terms()
		if err != nil {
			t.Fatal(err)
		}
		sql, args, ok := postgres.SearchStatements(tc.q, terms)
		if !ok {
			t.Fatalf("%s: no statement", tc.name)
		}
		checkPlan(t, tc.name, explain(t, conn, sql, args, false))
		checkPlan(t, tc.name+" (generic plan)", explain(t, conn, sql, args, true))
	}
	// The fixture is what the plans were checked on: the rare word is in
	// four messages, and searches find them.
	hits, err := st.Search(ctx, loom.SearchQuery{Text: "zyzzogeton", Limit: 10})
	if err != nil || len(hits) != 4 {
		t.Fatalf("search = %d hits, %v; want 4", len(hits), err)
	}
}

// A broad any-word query (more matches than RankDepth) ranks the store's
// newest matches. When its words' matches are few, counted, it does not
// walk back along the table testing each message: at a million messages
// the planner, guessing thousands of matches for each word outside its
// most common and taking a LIMIT to end the walk early, walked the whole
// table (2.8 s, for four words in 2,063 messages; loom-bench -scale
// -scale-postgres, docs/search.md) where the search index took 5 ms.
// When its words are in most messages, the walk finds the newest soon
// and is kept. The fixture is too small for the planner to make that
// mistake; what it checks is which statement the counts choose.
func TestBroadPoolWalksBackForCommonWordsOnly(t *testing.T) {
	t.Parallel()
	st, _ := planFixture(t)
	ctx := context.Background()
	conn := planConn(t, st)
	// 60,000 newer messages of common words only, so that the rare
	// words' matches are a few hundredths of the store, as in a real one
	// (island is in some 3,200 of the fixture's first 40,000).
	execAll(t, conn,
		`INSERT INTO sessions (id, user_id, key, surface, project_id, title, created_at, updated_at)
			SELECT format('s%05s', i), 'alice', 'cli:' || i, 'cli', 'p' || (i % 20), 'session ' || i,
				timestamptz '2026-02-01', timestamptz '2026-02-01' + i * interval '1 hour'
			FROM generate_series(401, 1000) i`,
		`INSERT INTO bodies (id, content)
			SELECT i, 'the session message agent model tool search index store ' || (i % 7) FROM generate_series(40001, 100000) i`,
		`INSERT INTO messages (session_id, seq, id, role, turn, body_id, created_at)
			SELECT format('s%05s', 1 + (i - 1) / 100), 1 + (i - 1) % 100, 'm' || i, 'user', 1 + (i - 1) % 100 / 2, i,
				timestamptz '2026-02-01' + i * interval '1 minute'
			FROM generate_series(40001, 100000) i`,
		analyzeOwn)
	count := func(words string) int {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM bodies WHERE search @@ to_tsquery('english', $1)`,
			strings.ReplaceAll(words, " ", " | ")).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// walks reports whether the plan walks bodies back along their key,
	// testing each against the query, and how it reads them.
	walks := func(plan planNode) (walk bool, reads []string) {
		plan.walk(func(n planNode) {
			if n.Relation == "bodies" || n.Index == "bodies_search" {
				reads = append(reads, strings.TrimSpace(n.NodeType+" "+n.Index))
			}
			if n.Relation == "bodies" && n.NodeType == "Index Scan" && n.Index == "bodies_pkey" && n.Filter != "" {
				walk = true
			}
		})
		return walk, reads
	}
	// How many messages hold words counted past RarityDepth, as the
	// statistics say: "session" is in every one of the 60,000 newer; a
	// phrase in no more than its rarer word; a word they do not hold,
	// or a prefix, is a floor only.
	ns, floors, err := st.CommonParts(ctx, []string{"'session'", "'session' <-> 'island'", "'island' | 'session'", "'zyzzogeton'", "'sess':*"}, 100000)
	if err != nil {
		t.Fatal(err)
	}
	if ns[0] < 60000 || floors[0] || ns[1] > ns[0] || ns[2] < ns[0] || !floors[3] || ns[3] != postgres.RarityDepth || !floors[4] {
		t.Errorf("common parts: %v, floors %v", ns, floors)
	}
	for _, tc := range []struct {
		words string
		few   bool
	}{
		{"zyzzogeton island", true},
		{"session message agent model", false},
	} {
		n := count(tc.words)
		if n <= postgres.RankDepth {
			t.Fatalf("%q: %d matches; the case needs more than RankDepth", tc.words, n)
		}
		for _, q := range []loom.SearchQuery{
			{Text: tc.words, UserID: "alice"},
			{Text: tc.words, UserID: "alice", ProjectID: "p3"},
		} {
			sql, args, indexed, err := st.BroadPool(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if indexed != tc.few {
				t.Errorf("%q (%d matches, project %q): run with sequential scans off %v, want %v", tc.words, n, q.ProjectID, indexed, tc.few)
			}
			if indexed {
				// As rankedThroughIndex runs it: the planner, which
				// prices testing a message against a tsquery as one
				// operator, may not read bodies whole instead.
				execAll(t, conn, `SET enable_seqscan = off`)
			}
			walk, reads := walks(explain(t, conn, sql, args, false))
			execAll(t, conn, `RESET enable_seqscan`)
			switch {
			case tc.few && (walk || slices.Contains(reads, "Seq Scan")):
				t.Errorf("%q (%d matches, project %q): bodies read by %v: a walk back along their key, or whole", tc.words, n, q.ProjectID, reads)
			case !tc.few && !walk:
				t.Errorf("%q (%d matches, project %q): bodies read by %v, not by a walk back along their key", tc.words, n, q.ProjectID, reads)
			}
		}
	}
}

// The title tier reads the first prompt of the sessions whose titles
// match, not of every session: with the sessions' statistics (which
// autovacuum gathers), PostgreSQL hashed every session with its first
// prompt looked up to join the few found, 430 ms of an all-project
// search at 10,000 sessions for two that matched.
func TestTitlePlanReadsFoundSessionsOnly(t *testing.T) {
	t.Parallel()
	st, _ := planFixture(t)
	ctx := context.Background()
	conn := planConn(t, st)
	if _, err := conn.Exec(ctx, `UPDATE sessions SET title = 'the mountain pass of ' || title WHERE title IN ('session 7', 'session 301'); `+analyzeOwn); err != nil {
		t.Fatal(err)
	}
	q := loom.SearchQuery{Text: "mountain pass", UserID: "alice", Titles: true, Limit: 10}
	terms, err := q.Terms()
	if err != nil {
		t.Fatal(err)
	}
	sql, args, ok := postgres.TitleStatement(q, terms)
	if !ok {
		t.Fatal("no statement")
	}
	var out []byte
	if err := conn.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...).Scan(&out); err != nil {
		t.Fatal(err)
	}
	most := 0.0
	readPlan(t, out).walk(func(n planNode) {
		if n.Relation == "messages" {
			most = max(most, n.Loops)
		}
	})
	if most > 10 {
		t.Errorf("messages read %v times for the first prompts of 2 sessions found (of 400)", most)
	}
	rows, err := conn.Query(ctx, sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		vals, err := r.Values()
		if err != nil {
			return "", err
		}
		return vals[0].(string), nil
	})
	if err != nil || len(found) != 2 {
		t.Fatalf("the statement found %v, %v; want the first prompts of sessions 7 and 301", found, err)
	}
}

// A question's name held by a few messages is weighed from those
// messages to their sessions: messages are read once per match, not
// once per message of the user's sessions (as when the planner started
// from the sessions, which at a million messages took 7 s).
func TestNamedSessionsPlanReadsMatchesOnly(t *testing.T) {
	t.Parallel()
	st, _ := planFixture(t)
	ctx := context.Background()
	conn := planConn(t, st)
	// The sessions as an import leaves them where nothing analyzes them
	// (autovacuum off): imports analyze messages and bodies only. With
	// its statistics, the planner starts from the matches whichever way
	// the statement is written.
	execAll(t, conn, `DELETE FROM pg_statistic WHERE starelid = 'sessions'::regclass`,
		`UPDATE pg_class SET reltuples = -1, relpages = 0 WHERE oid = 'sessions'::regclass`)
	sql, args := postgres.NamedStatement(loom.SearchQuery{Text: "Zyzzogeton", UserID: "alice"}, "zyzzogeton", 5000)
	var out []byte
	if err := conn.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...).Scan(&out); err != nil {
		t.Fatal(err)
	}
	read := 0.0
	readPlan(t, out).walk(func(n planNode) {
		if n.Relation == "messages" {
			read = max(read, n.Loops)
		}
	})
	if read > 10 {
		t.Errorf("messages read %v times to weigh a name held by 4 of 40,000", read)
	}
	rows, err := conn.Query(ctx, sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	held, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var n int64
		var session *string
		var share *float64
		if err := r.Scan(&n, &session, &share); err != nil || n != 4 || session == nil || *share <= 0 {
			return "", fmt.Errorf("row %d %v %v: %w", n, session, share, err)
		}
		return *session, nil
	})
	if err != nil || len(held) == 0 {
		t.Fatalf("the statement found %v, %v; want the sessions of alice that hold the word", held, err)
	}
}
