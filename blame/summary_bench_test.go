package blame

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/sqlite"
)

// BenchmarkSummarizeDir blames a directory of a real repository against
// a real store, as `loom blame summary DIR` does, with the line-age
// cache emptied before each run (the first summary of the directory):
// LOOM_BLAME_DIR_REPO is the work tree, LOOM_BLAME_DIR the directory in
// it, LOOM_BLAME_DIR_STORE the SQLite store its sessions were imported
// into (docs/performance.md, "loom blame summary of a directory").
func BenchmarkSummarizeDir(b *testing.B) {
	repo, dir, db := os.Getenv("LOOM_BLAME_DIR_REPO"), os.Getenv("LOOM_BLAME_DIR"), os.Getenv("LOOM_BLAME_DIR_STORE")
	if repo == "" || db == "" {
		b.Skip("LOOM_BLAME_DIR_REPO and LOOM_BLAME_DIR_STORE name a work tree and a store")
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cache := filepath.Join(b.TempDir(), "cache")
	for b.Loop() {
		b.StopTimer()
		if err := os.RemoveAll(cache); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		bl := &Blamer{Store: st, Roots: st, Versions: st, UserID: "local", Cache: cache}
		if _, err := bl.Summarize(ctx, Git{Dir: repo}, dir); err != nil {
			b.Fatal(err)
		}
	}
}
