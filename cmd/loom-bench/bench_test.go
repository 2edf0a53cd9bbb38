package main

import (
	"context"
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
