package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/conformance"
	"github.com/loomhq/loom/postgres"
)

const defaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var admin struct {
	once sync.Once
	url  string
	pool *pgxpool.Pool
	err  error
}

// server returns the test server's URL and a pool for making schemas. An
// unreachable server skips the test, except in CI, where nothing may be
// skipped silently.
func server(t testing.TB) (string, *pgxpool.Pool) {
	t.Helper()
	admin.once.Do(func() {
		admin.url = os.Getenv("LOOM_TEST_POSTGRES")
		if admin.url == "" {
			admin.url = defaultURL
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		admin.pool, admin.err = pgxpool.New(ctx, admin.url)
		if admin.err == nil {
			admin.err = admin.pool.Ping(ctx)
		}
	})
	if admin.err != nil {
		msg := "PostgreSQL at " + redact(admin.url) + " is unreachable (set LOOM_TEST_POSTGRES): " + admin.err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return admin.url, admin.pool
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}

// freshSchema creates an empty schema, dropped when the test ends, and
// returns a URL whose connections use it.
func freshSchema(t testing.TB) string {
	t.Helper()
	base, pool := server(t)
	var b [6]byte
	rand.Read(b[:])
	name := "loomtest_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE SCHEMA `+name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), `DROP SCHEMA `+name+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

func open(t testing.TB, dsn string) *postgres.Store {
	t.Helper()
	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// shared returns how to open stores on one pool to a fresh schema: like
// processes of their own, without a connection each.
func shared(t *testing.T) conformance.Opener {
	pool, err := pgxpool.New(context.Background(), freshSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return func(t *testing.T) loom.Store {
		st, err := postgres.OpenPool(context.Background(), pool)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
}

func TestConformance(t *testing.T) {
	conformance.Run(t, shared, func(t *testing.T, st loom.Store, sessionID string) {
		if _, err := st.(*postgres.Store).Pool().Exec(context.Background(), `UPDATE locks SET pid = $1 WHERE session_id = $2`, conformance.DeadPID(t), sessionID); err != nil {
			t.Fatal(err)
		}
	})
}

// Servers starting at once on a new database migrate it once; opening
// again changes nothing.
func TestMigrations(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A pool of its own each, as separate processes have.
			cfg, err := pgxpool.ParseConfig(dsn)
			if err != nil {
				errs <- err
				return
			}
			st, err := postgres.OpenConfig(context.Background(), cfg)
			if err != nil {
				errs <- err
				return
			}
			st.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent open: %v", err)
	}
	st := open(t, dsn)
	st2 := open(t, dsn)
	var n, latest int
	if err := st2.Pool().QueryRow(context.Background(), `SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &latest); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("migrations/*.sql")
	if n != len(files) || latest != len(files) {
		t.Fatalf("schema_migrations holds %d rows up to version %d, want %d and %d", n, latest, len(files), len(files))
	}
	s := &loom.Session{UserID: "alice", Key: "cli:x"}
	if err := st.Append(context.Background(), s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "hi"}}}); err != nil {
		t.Fatal(err)
	}
}

// Stores on one pool share its connections but hold locks apart; closing
// one leaves the pool to the others.
func TestOpenPool(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	a, err := postgres.OpenPool(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	b, err := postgres.OpenPool(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	lease, err := a.Lock(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(ctx, "s1"); loom.ErrorCode(err) != loom.ELOCKED {
		t.Fatalf("second store took a held lock: %v", err)
	}
	lease.Release(ctx)
	a.Close()
	a.Close()
	if _, err := b.Sessions(ctx, loom.SessionFilter{}); err != nil {
		t.Fatalf("after closing the other store: %v", err)
	}
	// Stores opened with a URL have pools of their own.
	c, d := open(t, dsn), open(t, dsn)
	if c.Pool() == d.Pool() {
		t.Fatal("two stores opened with one URL share a pool")
	}
}

// lease_ttl in the URL sets the store's lease, and is not sent to the
// server; a bad one is refused.
func TestLeaseTTLParameter(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	st := open(t, dsn+"&lease_ttl=2s")
	if st.LeaseTTL != 2*time.Second {
		t.Fatalf("LeaseTTL = %v, want 2s", st.LeaseTTL)
	}
	if def := open(t, dsn); def.LeaseTTL != loom.LeaseTTL {
		t.Fatalf("default LeaseTTL = %v", def.LeaseTTL)
	}
	for _, bad := range []string{"&lease_ttl=soon", "&lease_ttl=-1s", "&lease_ttl=0s", "&lease_ttl="} {
		if _, err := postgres.Open(context.Background(), dsn+bad); loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("Open with %s = %v, want an invalid-input error", bad, err)
		}
	}
}

func TestOpenRejects(t *testing.T) {
	for _, dsn := range []string{"", "sessions.db", "sqlite:x.db", "mysql://x"} {
		if _, err := postgres.Open(context.Background(), dsn); loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("Open(%q) = %v, want an invalid-input error", dsn, err)
		}
	}
}

func seeded(t testing.TB) *postgres.Store {
	t.Helper()
	st := open(t, freshSchema(t))
	s := &loom.Session{UserID: "alice", Key: "cli:api"}
	msgs := []*loom.Message{
		{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "How do I configure the postgres connection pool?"}}},
		{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "Set pool_size in config.toml; see https://example.com/docs and a@b.io, version 1.2.3."}}},
		{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "the and of to be"}}},
	}
	if err := st.Append(context.Background(), s, msgs...); err != nil {
		t.Fatal(err)
	}
	return st
}

func search(t *testing.T, st *postgres.Store, q loom.SearchQuery) []loom.SearchHit {
	t.Helper()
	q.UserID = "alice"
	hits, err := st.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("search %q: %v", q.Text, err)
	}
	return hits
}

// Stop words and punctuation make empty text-search queries: they match
// nothing and never fail.
func TestSearchEmptyQueries(t *testing.T) {
	t.Parallel()
	st := seeded(t)
	for _, q := range []string{"the", "the and of", `"to be"`, "...", "!!! ??? ---", "", " ", `"`, "&|!():*<->", "\x00", "\xff\xfe"} {
		if hits := search(t, st, loom.SearchQuery{Text: q}); len(hits) != 0 {
			t.Errorf("search %q = %+v, want no hits", q, hits)
		}
	}
	// A stop word next to a real word is dropped, not required.
	if hits := search(t, st, loom.SearchQuery{Text: "the pool"}); len(hits) != 2 {
		t.Errorf("search with a stop word = %d hits, want 2", len(hits))
	}
}

// Words joined by punctuation (file names, URLs, addresses, versions) are
// found word by word, as the query parser splits them, and snippets show
// the text as written.
func TestSearchPunctuation(t *testing.T) {
	t.Parallel()
	st := seeded(t)
	for _, q := range []string{"config", "toml", "config.toml", "pool_size", "size", "example", "docs", "b.io", "1.2.3", `"config toml"`} {
		hits := search(t, st, loom.SearchQuery{Text: q})
		if len(hits) != 1 || hits[0].Seq != 2 {
			t.Errorf("search %q = %+v, want message 2", q, hits)
		}
	}
	hits := search(t, st, loom.SearchQuery{Text: "toml", MarkStart: "[", MarkEnd: "]"})
	if len(hits) != 1 || !strings.Contains(hits[0].Snippet, "config.[toml];") {
		t.Fatalf("snippet = %+v", hits)
	}
	if strings.ContainsAny(hits[0].Snippet, "\x1f\x02\x03") {
		t.Fatalf("snippet keeps internal markers: %q", hits[0].Snippet)
	}
}

// A snippet shows a short message whole and marks what a long one leaves
// out with "…", as SQLite's snippets do.
func TestSnippets(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	var long []string
	for i := range 80 {
		long = append(long, fmt.Sprintf("filler%d", i))
	}
	long[40] = "needle"
	s := &loom.Session{UserID: "alice", Key: "cli:x"}
	if err := st.Append(context.Background(), s,
		&loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "(short) message, with a needle!"}}},
		&loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: strings.Join(long, " ")}}},
	); err != nil {
		t.Fatal(err)
	}
	hits := search(t, st, loom.SearchQuery{Text: "needle"})
	if len(hits) != 2 {
		t.Fatalf("hits = %+v", hits)
	}
	for _, h := range hits {
		switch h.Seq {
		case 1:
			if h.Snippet != "(short) message, with a **needle**!" {
				t.Errorf("short snippet = %q", h.Snippet)
			}
		case 2:
			if !strings.HasPrefix(h.Snippet, "…") || !strings.HasSuffix(h.Snippet, "…") || !strings.Contains(h.Snippet, "**needle**") {
				t.Errorf("long snippet = %q", h.Snippet)
			}
		}
	}
}

// Queries far beyond what anyone types still search, without error.
func TestSearchHugeQueries(t *testing.T) {
	t.Parallel()
	st := seeded(t)
	many := make([]string, 30000)
	for i := range many {
		many[i] = fmt.Sprintf("w%d", i)
	}
	long := strings.Join(many, " ")
	var phrases strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&phrases, `"pool w%d" `, i)
	}
	for _, q := range []string{long, `"` + long + `"`, strings.Repeat(`"a b" `, 20000), phrases.String(), strings.Repeat("x", 5000) + " pool", "pool " + strings.Repeat("ab ", 100000)} {
		if _, err := st.Search(context.Background(), loom.SearchQuery{Text: q, UserID: "alice"}); err != nil {
			t.Errorf("search of %d bytes: %v", len(q), err)
		}
	}
	if hits := search(t, st, loom.SearchQuery{Text: strings.Repeat("x", 5000) + " configure"}); len(hits) != 1 {
		t.Errorf("a word too long to index is left out of the query: %+v", hits)
	}
}

func TestSearchRaw(t *testing.T) {
	t.Parallel()
	st := seeded(t)
	for _, q := range []string{"pool & (", "he said", "a &", "!", "<->", "pool:*Z"} {
		_, err := st.Search(context.Background(), loom.SearchQuery{Text: q, Raw: true, UserID: "alice"})
		if loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("raw %q = %v, want an invalid-input error", q, err)
		}
	}
	if hits := search(t, st, loom.SearchQuery{Text: "configur:* & !kubernetes", Raw: true}); len(hits) != 1 || hits[0].Seq != 1 {
		t.Fatalf("raw query = %+v", hits)
	}
	if hits := search(t, st, loom.SearchQuery{Text: "pool <-> size", Raw: true}); len(hits) != 1 || hits[0].Seq != 2 {
		t.Fatalf("raw phrase = %+v", hits)
	}
}

// Text PostgreSQL cannot hold (NUL bytes, invalid UTF-8) still round-trips
// in parts, which are JSON; only the derived search text is cleaned.
func TestAwkwardText(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	ctx := context.Background()
	s := &loom.Session{UserID: "alice", Key: "cli:x"}
	text := "nul\x00byte and \xff invalid"
	if err := st.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}); err != nil {
		t.Fatal(err)
	}
	msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("messages = %v, %v", msgs, err)
	}
	if got := msgs[0].Text(); got != "nul\x00byte and \uFFFD invalid" {
		t.Fatalf("text = %q", got)
	}
	if hits := search(t, st, loom.SearchQuery{Text: "invalid"}); len(hits) != 1 {
		t.Fatalf("search = %+v", hits)
	}
}

// Deleting rows by hand, messages first and then the session, leaves no
// orphaned bodies; a fork's shared bodies stay while it uses them.
func TestHandDeletion(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	ctx := context.Background()
	s := &loom.Session{UserID: "alice", Key: "cli:x"}
	for i := range 3 {
		m := []*loom.Message{
			{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "question " + string(rune('a'+i))}}},
			{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "answer"}}},
		}
		if err := st.Append(ctx, s, m...); err != nil {
			t.Fatal(err)
		}
	}
	f, err := st.Fork(ctx, s.ID, loom.ForkOptions{Turn: 2})
	if err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		t.Helper()
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM bodies`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 6 {
		t.Fatalf("bodies after fork = %d, want 6 (shared)", n)
	}
	if _, err := st.Pool().Exec(ctx, `DELETE FROM messages WHERE session_id = $1`, s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `DELETE FROM sessions WHERE id = $1`, s.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 4 {
		t.Fatalf("bodies after hand deletion = %d, want the fork's 4", n)
	}
	if _, err := st.Pool().Exec(ctx, `DELETE FROM sessions WHERE id = $1`, f.ID); err != nil {
		t.Fatal(err)
	}
	var msgs int
	st.Pool().QueryRow(ctx, `SELECT count(*) FROM messages`).Scan(&msgs)
	if n := count(); n != 0 || msgs != 0 {
		t.Fatalf("after deleting the fork's session row: %d bodies, %d messages", n, msgs)
	}
}

// FuzzSearchQuery: whatever a user types, a search never fails; a raw
// query fails only as invalid input.
func FuzzSearchQuery(f *testing.F) {
	st := seeded(f)
	for _, q := range []string{"pool", `he said "hi" AND (NEAR* -x`, `"`, `""`, "a:b", "!!!", "the", "&|!", "\x00", "日本語 テキスト", "1.2.3", `"pool size" config`} {
		f.Add(q, false)
		f.Add(q, true)
	}
	f.Fuzz(func(t *testing.T, q string, raw bool) {
		_, err := st.Search(context.Background(), loom.SearchQuery{Text: q, Raw: raw, UserID: "alice"})
		if raw {
			if err != nil && loom.ErrorCode(err) != loom.EINVALID {
				t.Fatalf("raw search %q: %v", q, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
	})
}

// FuzzResolve: any reference either resolves or fails with a coded
// not-found, ambiguous or invalid error; never an internal error, also
// for text PostgreSQL cannot hold.
func FuzzResolve(f *testing.F) {
	st := open(f, freshSchema(f))
	s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:fuzz", Title: "Fuzz Title"}
	if err := st.Append(context.Background(), s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "x"}}}); err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{s.ID, s.ID[:4], s.ID[:8], strings.ToUpper(s.ID[:10]), "cli:fuzz", "fuzz title", "", " ", "%", "_", "0000", "~", "'; DROP TABLE sessions; --", "\x00", "\xff", "FUZZ TİTLE"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		got, err := st.Resolve(context.Background(), ref, loom.ResolveScope{UserID: "alice"})
		switch loom.ErrorCode(err) {
		case "":
			if got.ID != s.ID {
				t.Fatalf("resolve %q found %s", ref, got.ID)
			}
		case loom.ENOTFOUND, loom.EAMBIGUOUS, loom.EINVALID:
		default:
			t.Fatalf("resolve %q: %v", ref, err)
		}
	})
}

// Import stores every field as given, through COPY: errors, completion
// times, tool parts with raw JSON, summaries, a trashed session.
func TestImportRoundTrip(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	ctx := context.Background()
	at := time.Date(2025, 3, 4, 5, 6, 7, 890e6, time.UTC)
	done := at.Add(1500 * time.Millisecond)
	deleted := at.Add(time.Hour)
	s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "telegram:9", Title: "t", Description: "d", Model: "m", Provider: "p",
		Profile: "coder", Cwd: "/x", CreatedAt: at, UpdatedAt: done, DeletedAt: &deleted, Usage: loom.Usage{OutputTokens: 3, CostUSD: 0.125}}
	msgs := []*loom.Message{
		{ID: loom.NewID(), Seq: 1, Role: loom.RoleUser, CreatedAt: at, Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "run it"}}},
		{ID: loom.NewID(), Seq: 2, Role: loom.RoleAssistant, Model: "m", Provider: "p", CreatedAt: at, CompletedAt: &done,
			Usage: loom.Usage{InputTokens: 1, OutputTokens: 3, CostUSD: 0.125, APICalls: 1},
			Error: &loom.MessageError{Message: "rate limited", Type: "api"},
			Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartTool, CallID: "c1", Name: "read_file", Status: loom.ToolError,
				Input: json.RawMessage(`{"z":1,"a":[true,null]}`), Error: "boom", StartedAt: &at, EndedAt: &done, Metadata: json.RawMessage(`{"k":"v"}`)}}},
		{ID: loom.NewID(), Seq: 3, Role: loom.RoleSummary, CreatedAt: done, Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "summary"}}},
	}
	if err := st.Import(ctx, []*loom.SessionData{{Session: s, Messages: msgs}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		m.SessionID = s.ID
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(msgs)
	if string(g) != string(w) {
		t.Fatalf("imported messages:\n got %s\nwant %s", g, w)
	}
	x, err := st.Session(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if x.DeletedAt == nil || !x.DeletedAt.Equal(deleted) || x.SummarySeq != 3 || x.TurnCount != 1 || x.LastPrompt != "run it" ||
		x.Usage != s.Usage || x.Surface != "telegram" || x.Profile != "coder" || !x.UpdatedAt.Equal(done) {
		t.Fatalf("imported session = %+v", x)
	}
	if err := st.Restore(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, st, loom.SearchQuery{Text: "boom read_file"}); len(hits) != 1 || hits[0].Seq != 2 {
		t.Fatalf("search in imported tool part = %+v", hits)
	}
}
