package main

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// BenchmarkImport imports sessions of 1,000 generated messages each.
func BenchmarkImport(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "s.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	g := newGenerator(3)
	data := make([]*loom.SessionData, 20)
	for i := range data {
		data[i] = g.session("u", 1000, loom.Project{ID: "p", Name: "p", Root: "/p"})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := data[i%len(data)]
		if i >= len(data) {
			b.StopTimer()
			d = g.session("u", 1000, loom.Project{ID: "p", Name: "p", Root: "/p"})
			b.StartTimer()
		}
		if err := st.Import(ctx, []*loom.SessionData{d}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "msgs/s")
}

// The PostgreSQL run at a small scale: import figures, a searched store
// generated into a schema of its own, and its searches beside the
// baseline's. `go run ./cmd/loom-bench -pg` runs it at a million
// messages.
func TestPostgresBench(t *testing.T) {
	if testing.Short() {
		t.Skip("generates stores")
	}
	pg, err := testPostgres(t)
	if err != nil {
		t.Skipf("PostgreSQL is unreachable: %v", err)
	}
	ctx := context.Background()
	u, drop, err := postgresSchema(ctx, pg, "loombench_test_")
	if err != nil {
		t.Fatal(err)
	}
	defer drop()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.md")
	b := pgBench{server: pg, schema: parsed.Query().Get("search_path"), sessions: 20, messages: 100, imports: 3000, runs: 3,
		ops: func(string) bool { return true }, out: out}
	if err := pgBenchMain(ctx, b); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bulk import", "rare word", "three common words", "2000 messages in 20 sessions"} {
		if !bytes.Contains(report, []byte(want)) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if bytes.Contains(report, []byte("error")) {
		t.Errorf("report:\n%s", report)
	}
}

// The store's run at a small scale, on the operations that have a
// minimal-store figure: every one of them has it, with its ratio, and the
// size on disk of both stores is reported. `go run ./cmd/loom-bench`
// runs it at the specification's scale.
func TestMinimalStoreColumn(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report.md")
	ops := []string{"newest-50", "list the 50", "search, rare", "search, three", "open the store", "durable", "fork", "rewind", "size on disk"}
	c := config{db: filepath.Join(dir, "sessions.db"), sessions: 20, messages: 20, big: 2000, runs: 3, out: out,
		ops: regexp.MustCompile(strings.Join(ops, "|"))}
	if err := run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	// A second run reuses both stores.
	if err := run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(report, []byte("| operation | budget | loom | baseline | ratio | minimal store | ratio to minimal | |")) {
		t.Errorf("report lacks the minimal store's columns:\n%s", report)
	}
	if bytes.Contains(report, []byte("error")) {
		t.Errorf("report:\n%s", report)
	}
	rows := 0
	for _, line := range strings.Split(string(report), "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| operation") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 8 {
			t.Errorf("%d cells: %s", len(cells), line)
			continue
		}
		rows++
		if cells[0] == "size on disk" {
			if !strings.HasSuffix(cells[2], " MB") || !strings.HasSuffix(cells[5], " MB") || !strings.HasSuffix(cells[6], "×") {
				t.Errorf("size row: %s", line)
			}
			continue
		}
		if !strings.HasPrefix(cells[5], "median ") || !strings.HasSuffix(cells[6], "×") {
			t.Errorf("row without a minimal-store figure: %s", line)
		}
	}
	if rows != len(ops) {
		t.Errorf("%d rows, want %d:\n%s", rows, len(ops), report)
	}
}

// The minimal store's fork, rewind and delete keep its messages and its
// search index in step.
func TestMinimalStore(t *testing.T) {
	ctx := context.Background()
	s, err := createMinimal(ctx, filepath.Join(t.TempDir(), "minimal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := newGenerator(1).session("u", 100, loom.Project{ID: "p", Name: "p", Root: "/p"})
	if err := s.insert(ctx, []*loom.SessionData{d}); err != nil {
		t.Fatal(err)
	}
	if err := s.append(ctx, d.Session.ID, "one more "+RareWord); err != nil {
		t.Fatal(err)
	}
	hits := func(session string) int {
		t.Helper()
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM messages_fts f JOIN messages m ON m.rowid = f.rowid
			WHERE messages_fts MATCH ? AND m.session_id = ?`, RareWord, session).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	count := func(session string) (n int) {
		t.Helper()
		var rows int
		if err := s.db.QueryRowContext(ctx, `SELECT message_count FROM sessions WHERE id = ?`, session).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE session_id = ?`, session).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != n {
			t.Errorf("session %s counts %d messages and holds %d", session, n, rows)
		}
		return n
	}
	if n := hits(d.Session.ID); n != 2 {
		t.Fatalf("%d hits for the rare word, want 2", n)
	}
	fork, err := s.fork(ctx, d.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(fork); n != 101 || hits(fork) != 2 {
		t.Errorf("fork: %d messages, %d hits", n, hits(fork))
	}
	kept, err := s.rewind(ctx, fork, 10)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(fork); n != 20 {
		t.Errorf("rewound to turn 10: %d messages, want 20", n)
	}
	if n := count(kept); n != 101 || hits(kept) != 2 {
		t.Errorf("rewind's fork: %d messages, %d hits", n, hits(kept))
	}
	if err := s.append(ctx, fork, "after the rewind"); err != nil {
		t.Fatal(err)
	}
	var turn int
	if err := s.db.QueryRowContext(ctx, `SELECT data ->> '$.turn' FROM messages WHERE session_id = ? AND seq = 21`, fork).Scan(&turn); err != nil || turn != 11 {
		t.Errorf("appended after turn 10: turn %d (%v)", turn, err)
	}
	if err := s.delete(ctx, []string{fork, kept}); err != nil {
		t.Fatal(err)
	}
	var all int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?`, RareWord).Scan(&all); err != nil || all != 2 {
		t.Errorf("after the deletes the index holds %d rows with the rare word, want 2 (%v)", all, err)
	}
}
