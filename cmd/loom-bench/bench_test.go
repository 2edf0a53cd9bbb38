package main

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
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
