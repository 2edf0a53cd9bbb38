package command_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/sqlite"
)

// BenchmarkAdoptProject times the adoption a store open runs in a clone
// whose project loom came to identify by its remote, with N sessions
// recorded under the clone's path to move, one of them keyed as the
// repository's current session already is.
func BenchmarkAdoptProject(b *testing.B) {
	for _, n := range []int{2000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := context.Background()
			root := "/src/api-old"
			repo := loom.Project{ID: paths.ProjectID("github.com/acme/api"), Name: "api", Root: root}
			old := loom.Project{ID: paths.ProjectID(root), Name: "api-old", Root: root}
			base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "sessions.db"))
				if err != nil {
					b.Fatal(err)
				}
				data := []*loom.SessionData{{Session: &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:api", Project: repo, CreatedAt: base, UpdatedAt: base}}}
				for j := range n {
					at := base.Add(time.Duration(j) * time.Second)
					key := loom.CLIKeyAt("api-old", at)
					if j == 0 {
						key = "cli:api-old"
					}
					data = append(data, &loom.SessionData{Session: &loom.Session{ID: loom.NewID(), UserID: "local", Key: key, Project: old, Cwd: root, CreatedAt: at, UpdatedAt: at}})
				}
				if err := st.Import(ctx, data); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				moved, err := command.AdoptProject(ctx, st, "local", repo)
				b.StopTimer()
				if err != nil || moved != n {
					b.Fatalf("moved %d of %d: %v", moved, n, err)
				}
				st.Close()
			}
		})
	}
}
