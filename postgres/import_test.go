package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/internal/testkit/plantest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/postgres"
)

// awkward are texts whose search vectors are easy to get wrong:
// punctuation the search text sets apart, stop words only, nothing,
// non-ASCII letters, text PostgreSQL cannot hold.
var awkward = []string{
	"config.toml, https://example.com/docs and a@b.io — version 1.2.3",
	"the and of to be",
	"",
	"Ünïcödé naïve café 東京 Москва",
	"nul\x00byte and \xff invalid",
	"don't re-run kubernetes.yaml; (see §3)",
}

// importData makes sessions of n messages each, the awkward texts among
// them.
func importData(sessions, n int) []*loom.SessionData {
	var data []*loom.SessionData
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range sessions {
		s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: fmt.Sprintf("cli:import%d", i), Kind: loom.KindMain,
			CreatedAt: t0, UpdatedAt: t0.Add(time.Duration(n) * time.Second)}
		d := &loom.SessionData{Session: s}
		for j := 1; j <= n; j++ {
			text := fmt.Sprintf("message %d of session %d says wordx%d", j, i, j%97)
			if j%100 == 0 {
				text = awkward[j/100%len(awkward)]
			}
			d.Messages = append(d.Messages, &loom.Message{ID: loom.NewID(), SessionID: s.ID, Seq: int64(j), Role: loom.RoleUser, Turn: j,
				Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: text}}, CreatedAt: t0.Add(time.Duration(j) * time.Second)})
		}
		s.MessageCount, s.TurnCount = n, n
		data = append(data, d)
	}
	return data
}

// checkVectors fails unless every body's search vector is the one the
// insert trigger computes from its content.
func checkVectors(t *testing.T, st *postgres.Store, want int) {
	t.Helper()
	var n, wrong int
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(*),
		count(*) FILTER (WHERE search IS DISTINCT FROM to_tsvector('english'::regconfig, loom_search_text(content)))
		FROM bodies`).Scan(&n, &wrong); err != nil {
		t.Fatal(err)
	}
	if n != want || wrong != 0 {
		t.Fatalf("%d bodies, %d with a wrong search vector; want %d and 0", n, wrong, want)
	}
}

// An import large enough to compute its search vectors on other
// connections stores the vectors the trigger would have, and searches
// find its messages.
func TestImportVectors(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	data := importData(3, 1500)
	if err := st.Import(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	checkVectors(t, st, 4500)
	// wordx13 is in messages 13, 110, … 1468 of each session.
	if hits := search(t, st, loom.SearchQuery{Text: "wordx13", Limit: 100, Exact: true}); len(hits) != 3*16 {
		t.Fatalf("search = %d hits, want 48", len(hits))
	}
	if hits := search(t, st, loom.SearchQuery{Text: `"example com docs"`, Limit: 100, Exact: true}); len(hits) != 3*2 {
		t.Fatalf("phrase search = %d hits, want 6", len(hits))
	}
}

// Vectors computed by an import's helpers are byte for byte those the
// trigger computes for a body inserted without one, whichever chunk they
// fall in.
func TestImportVectorsMatchTrigger(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	ctx := context.Background()
	var texts []string
	for i := range 2500 {
		texts = append(texts, fmt.Sprintf("%s %d", awkward[i%len(awkward)], i))
	}
	texts[0], texts[1] = "", "the"
	got, err := st.ImportVectors(ctx, texts, 2)
	if err != nil {
		t.Fatal(err)
	}
	// The trigger's vectors: the texts inserted as bodies, in their
	// order, in a transaction rolled back.
	tx, err := st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, `WITH ins AS (INSERT INTO bodies (content) SELECT t FROM unnest($1::text[]) WITH ORDINALITY u(t, i) ORDER BY i
		RETURNING id, tsvectorsend(search) AS v) SELECT v FROM ins ORDER BY id`, cleanAll(texts))
	if err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	for rows.Next() {
		var v []byte
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		want = append(want, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) || len(want) != len(texts) {
		t.Fatalf("%d vectors computed, %d by the trigger, for %d texts", len(got), len(want), len(texts))
	}
	for i := range texts {
		if string(got[i]) != string(want[i]) {
			t.Fatalf("vector of text %d (%q) = %x, want %x", i, texts[i], got[i], want[i])
		}
	}
}

// cleanAll is what an import stores of texts: PostgreSQL holds neither
// NUL nor invalid UTF-8.
func cleanAll(texts []string) []string {
	out := make([]string, len(texts))
	for i, s := range texts {
		out[i] = postgres.Clean(s)
	}
	return out
}

// An import on a pool with no connection to spare, or none free,
// computes every vector on its own connection and still completes.
func TestImportWithoutSpareConnections(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		max, held int32
	}{{"one connection", 1, 0}, {"all others busy", 3, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := pgxpool.ParseConfig(freshSchema(t))
			if err != nil {
				t.Fatal(err)
			}
			cfg.MaxConns = tc.max
			pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			st := storetest.Must(postgres.OpenPool(context.Background(), pool))(t)
			for range tc.held {
				c, err := pool.Acquire(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Release()
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := st.Import(ctx, importData(1, 2500)); err != nil {
				t.Fatal(err)
			}
			checkVectors(t, st, 2500)
		})
	}
}

// Changing a body's content by hand, or its vector, computes the vector
// again from the content; a body inserted without one gets it.
func TestSearchColumnFollowsContent(t *testing.T) {
	t.Parallel()
	st := seeded(t)
	ctx := context.Background()
	for _, stmt := range []string{
		`UPDATE bodies SET content = 'rewritten by hand' WHERE content LIKE 'How do I%'`,
		`UPDATE bodies SET search = to_tsvector('english', 'bogus') WHERE content LIKE 'Set pool_size%'`,
		`INSERT INTO bodies (content) VALUES ('inserted by hand')`,
	} {
		if _, err := st.Pool().Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	checkVectors(t, st, 4)
	if hits := search(t, st, loom.SearchQuery{Text: "rewritten"}); len(hits) != 1 || hits[0].Seq != 1 {
		t.Fatalf("search after a hand edit = %+v", hits)
	}
	if hits := search(t, st, loom.SearchQuery{Text: "bogus"}); len(hits) != 0 {
		t.Fatalf("a vector set by hand is searched: %+v", hits)
	}
}

// The first import into a store gathers statistics of messages, without
// which the planner misjudges every search's lookups, and of bodies,
// whose search column's most common words tell a broad search how many
// matches its common words have.
func TestImportAnalyzes(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	ctx := context.Background()
	if err := st.Import(ctx, importData(2, 10)); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"messages", "bodies"} {
		var analyzed bool
		if err := st.Pool().QueryRow(ctx, `SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relid = $1::regclass`, table).Scan(&analyzed); err != nil || !analyzed {
			t.Errorf("%s analyzed: %v, %v", table, analyzed, err)
		}
	}
	var common int
	if err := st.Pool().QueryRow(ctx, `SELECT coalesce(array_length(most_common_elems::text::text[], 1), 0) FROM pg_stats
		WHERE schemaname = current_schema() AND tablename = 'bodies' AND attname = 'search'`).Scan(&common); err != nil || common == 0 {
		t.Errorf("the search column's most common words: %d, %v", common, err)
	}
}

// An import that keeps the originals of the files it read analyzes
// originals too. Without its statistics the look-ups of a file's chunks
// by path that an import makes for each file were planned on an empty
// table through originals_tool (user_id, tool), and the pool's
// connections kept that plan, each look-up walking every chunk of the
// user: the analysis has them planned again, on the primary key
// (TestHotQueriesPlannedOnKeys checks the plans).
func TestImportAnalyzesOriginals(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	ctx := context.Background()
	dir := t.TempDir()
	for i := range 3 {
		plantest.WriteClaudeSession(t, dir, i, 2)
	}
	im := &importer.Importer{Store: st, UserID: plantest.User}
	if _, err := im.Run(ctx, []importer.Target{{Format: claudecode.Format{}, Roots: []string{dir}, Explicit: true}}); err != nil {
		t.Fatal(err)
	}
	var kept int
	var analyzed bool
	if err := st.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM originals), last_analyze IS NOT NULL
		FROM pg_stat_user_tables WHERE relid = 'originals'::regclass`).Scan(&kept, &analyzed); err != nil {
		t.Fatal(err)
	}
	if kept != 3 || !analyzed {
		t.Errorf("%d chunks kept, originals analyzed: %v; want 3, true", kept, analyzed)
	}
}

// A store grown past twice what was analyzed is analyzed again at an
// import, as autovacuum would (which may be off): with its first
// import's statistics alone, at a hundred times that size the planner
// took words in none of the newer messages for common ones.
func TestImportAnalyzesAgainWhenGrown(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	ctx := context.Background()
	if err := st.Import(ctx, importData(2, 10)); err != nil {
		t.Fatal(err)
	}
	analyzed := func() (last time.Time, modified int64) {
		t.Helper()
		if err := st.Pool().QueryRow(ctx, `SELECT coalesce(pg_stat_get_last_analyze_time('bodies'::regclass), 'epoch'),
			pg_stat_get_mod_since_analyze('bodies'::regclass)`).Scan(&last, &modified); err != nil {
			t.Fatal(err)
		}
		return last, modified
	}
	first, _ := analyzed()
	if first.Unix() == 0 {
		t.Fatal("the first import did not analyze bodies")
	}
	batch := func(name string, sessions, n int) []*loom.SessionData {
		data := importData(sessions, n)
		for i, d := range data {
			d.Session.Key = fmt.Sprintf("cli:%s%d", name, i)
		}
		return data
	}
	if err := st.Import(ctx, batch("more", 30, 100)); err != nil {
		t.Fatal(err)
	}
	// Each connection sends its counts to the server's statistics when
	// idle, up to seconds after: the import that follows them is the one
	// that sees the store has grown, unless this one already did.
	deadline := time.Now().Add(time.Minute)
	for {
		last, modified := analyzed()
		if last.After(first) {
			return
		}
		if modified >= 3000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("3,000 rows imported; the statistics' counters show %d after a minute", modified)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := st.Import(ctx, batch("last", 1, 1)); err != nil {
		t.Fatal(err)
	}
	if last, modified := analyzed(); !last.After(first) {
		t.Errorf("bodies not analyzed again after growing from 20 rows by %d", modified)
	}
}
