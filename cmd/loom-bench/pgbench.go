package main

// The PostgreSQL run: bulk import into a fresh schema, and searches over
// a store generated once into a schema of its own that later runs reuse,
// each beside the same operation written by hand with pgx.

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/postgres"
)

// pgBench is what the PostgreSQL run measures, and where.
type pgBench struct {
	server string // the server's URL, without a search_path
	// schema holds the search store, generated when it holds no session
	// and kept for later runs.
	schema   string
	sessions int // generated sessions …
	messages int // … of this many messages each
	imports  int // messages the import figure imports
	runs     int // repetitions of the rare-word search
	ops      func(op string) bool
	out      string
}

// schemaURL returns the server's URL with search_path set to schema.
func schemaURL(server, schema string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// pgBenchMain runs the PostgreSQL measurements and prints them as the
// Markdown table the SQLite run prints.
func pgBenchMain(ctx context.Context, b pgBench) error {
	rep := &report{}
	if b.ops("bulk import") {
		rate, baseRate, err := pgImportRates(ctx, b.server, b.imports)
		if err != nil {
			return err
		}
		rep.addRate("PostgreSQL: bulk import, search index included", "≥ 25,000 messages/s", 25000, rate, baseRate)
	}
	if !b.ops("search") {
		rep.scale = fmt.Sprintf("%d messages imported; %d cores, %s", b.imports, runtime.NumCPU(), runtime.Version())
		return rep.print(b.out)
	}
	st, conn, genRate, err := pgSearchStore(ctx, b)
	if err != nil {
		return err
	}
	rep.importNote = "The searched store already existed: no generation figure this run."
	if genRate > 0 {
		rep.importNote = fmt.Sprintf("While generating the searched store, Import ran at %.0f messages/s (the workload's generation included).", genRate)
	}
	defer st.Close()
	defer conn.Close(context.Background())
	var total, nsess int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM sessions)`).Scan(&total, &nsess); err != nil {
		return err
	}
	rep.scale = fmt.Sprintf("PostgreSQL, schema %s: %d messages in %d sessions; %d cores, %s", b.schema, total, nsess, runtime.NumCPU(), runtime.Version())
	user := "bench"
	if b.ops("search, rare") {
		rep.add(measure("PostgreSQL: search, rare word, top 20 with snippets", "≤ 20 ms", 20, b.runs,
			func() error {
				h, err := st.Search(ctx, loom.SearchQuery{Text: RareWord, UserID: user, Limit: 20})
				return expectHits(h, err)
			},
			func() error { return pgBaselineSearch(ctx, conn, user, RareWord, 20) }))
	}
	if b.ops("search, three") {
		rep.add(measure("PostgreSQL: search, three common words, top 20 with snippets", "", 0, max(b.runs/10, 5),
			func() error {
				h, err := st.Search(ctx, loom.SearchQuery{Text: CommonQuery, UserID: user, Limit: 20})
				return expectHits(h, err)
			},
			func() error { return pgBaselineSearch(ctx, conn, user, CommonQuery, 20) }))
	}
	if b.ops("recall") {
		rep.add(measure("PostgreSQL: recall for a prompt in one project, 1,500 tokens", "≤ 100 ms", 100, max(b.runs/4, 20),
			recallOnce(ctx, st, user),
			func() error { return pgBaselineSearch(ctx, conn, user, CommonQuery, 20) }))
	}
	return rep.print(b.out)
}

// pgSearchStore opens the store in b.schema, first generating it when it
// holds no session: b.sessions sessions of b.messages messages through
// Store.Import, a hundred sessions at a time. It returns the store, a
// connection to its schema for the baseline, and the rate of the
// generation in messages per second (0 when the store was there).
func pgSearchStore(ctx context.Context, b pgBench) (*postgres.Store, *pgx.Conn, float64, error) {
	u, err := schemaURL(b.server, b.schema)
	if err != nil {
		return nil, nil, 0, err
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("PostgreSQL at %s: %w", redact(b.server), err)
	}
	var st *postgres.Store
	fail := func(err error) (*postgres.Store, *pgx.Conn, float64, error) {
		if st != nil {
			st.Close()
		}
		conn.Close(ctx)
		return nil, nil, 0, err
	}
	if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{b.schema}.Sanitize()); err != nil {
		return fail(err)
	}
	if st, err = postgres.Open(ctx, u); err != nil {
		return fail(err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM sessions LIMIT 1) s`).Scan(&n); err != nil {
		return fail(err)
	}
	if n > 0 {
		fmt.Fprintf(os.Stderr, "postgres: reusing the store in schema %s (drop it to regenerate)\n", b.schema)
		return st, conn, 0, nil
	}
	t0 := time.Now()
	if err := generateSessions(newGenerator(1), b.sessions, b.messages, benchProjects(), " (postgres)", func(batch []*loom.SessionData) error {
		return st.Import(ctx, batch)
	}); err != nil {
		return fail(err)
	}
	took := time.Since(t0)
	fmt.Fprintf(os.Stderr, "postgres: %d messages generated in %.0f s\n", b.sessions*b.messages, took.Seconds())
	// Statistics of the search column tell the planner how common a word
	// is; autovacuum would gather them only later.
	if err := analyzeSchema(ctx, conn); err != nil {
		return fail(err)
	}
	return st, conn, float64(b.sessions*b.messages) / took.Seconds(), nil
}

// analyzeSchema analyzes the tables of conn's schema (the first of its
// search_path) only: a bare ANALYZE reads every table of the database,
// and changes the plans of other stores in it, tests' running beside.
func analyzeSchema(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, `SELECT format('%I.%I', schemaname, relname) FROM pg_stat_user_tables WHERE schemaname = current_schema()`)
	if err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) == 0 {
		return err
	}
	if _, err := conn.Exec(ctx, `ANALYZE `+strings.Join(tables, ", ")); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	return nil
}

// pgBaselineSearch is the search written by hand, as postgres.md shows
// it: the words through plainto_tsquery, ranked by ts_rank, snippets by
// ts_headline.
func pgBaselineSearch(ctx context.Context, conn *pgx.Conn, user, text string, n int) error {
	rows, err := conn.Query(ctx, `SELECT m.session_id, m.id, m.seq, ts_rank(b.search, q, 1) AS score,
			ts_headline('english', b.content, q, 'StartSel=**, StopSel=**')
		FROM bodies b JOIN messages m ON m.body_id = b.id JOIN sessions s ON s.id = m.session_id,
			plainto_tsquery('english', $1) q
		WHERE b.search @@ q AND s.user_id = $2 AND s.deleted_at IS NULL
		ORDER BY score DESC LIMIT $3`, text, user, n)
	if err != nil {
		return err
	}
	found := 0
	for rows.Next() {
		found++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if found == 0 {
		return fmt.Errorf("baseline search found nothing")
	}
	return nil
}

// pgImportRates imports n generated messages (sessions of 1,000, ten
// sessions per Import) into a fresh schema, and the same messages by hand
// into another: one INSERT per message, sent in batches of a session, in
// one transaction. It returns both rates in messages per second;
// generating the messages is not timed.
func pgImportRates(ctx context.Context, server string, n int) (rate, baseRate float64, err error) {
	batches := importBatches(n)
	u, drop, err := postgresSchema(ctx, server, "loombench_import_")
	if err != nil {
		return 0, 0, err
	}
	defer drop()
	st, err := postgres.Open(ctx, u)
	if err != nil {
		return 0, 0, err
	}
	defer st.Close()
	if rate, err = importRate(batches, n, func(b []*loom.SessionData) error { return st.Import(ctx, b) }); err != nil {
		return 0, 0, err
	}
	fmt.Fprintf(os.Stderr, "postgres: imported %d messages at %.0f/s\n", n, rate)

	bu, bdrop, err := postgresSchema(ctx, server, "loombench_import_")
	if err != nil {
		return 0, 0, err
	}
	defer bdrop()
	bst, err := postgres.Open(ctx, bu) // creates the schema
	if err != nil {
		return 0, 0, err
	}
	bst.Close()
	conn, err := pgx.Connect(ctx, bu)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close(context.Background())
	t0 := time.Now()
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, batch := range batches {
			for _, d := range batch {
				if err := pgBaselineInsert(ctx, tx, d); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		return 0, 0, fmt.Errorf("baseline import: %w", err)
	}
	baseRate = float64(n) / time.Since(t0).Seconds()
	fmt.Fprintf(os.Stderr, "postgres: baseline inserted %d messages at %.0f/s\n", n, baseRate)
	return rate, baseRate, nil
}

// pgBaselineInsert writes one session the plain way: its row, then one
// statement per message that inserts the body and the message.
func pgBaselineInsert(ctx context.Context, tx pgx.Tx, d *loom.SessionData) error {
	s := d.Session
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO sessions (id, user_id, created_at, updated_at) VALUES ($1, $2, $3, $4)`,
		s.ID, s.UserID, s.CreatedAt, s.UpdatedAt)
	for _, m := range d.Messages {
		parts, err := sqlstore.EncodeParts(m)
		if err != nil {
			return err
		}
		b.Queue(`WITH b AS (INSERT INTO bodies (parts, content) VALUES ($1, $2) RETURNING id)
			INSERT INTO messages (session_id, seq, id, role, body_id, created_at) SELECT $3, $4, $5, $6, b.id, $7 FROM b`,
			parts, m.SearchText(), s.ID, m.Seq, m.ID, m.Role, m.CreatedAt)
	}
	return tx.SendBatch(ctx, b).Close()
}
