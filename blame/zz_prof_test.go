package blame

import (
	"context"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/loomhq/loom/sqlite"
)

func TestZZProf(t *testing.T) {
	db, file, cache := os.Getenv("P_DB"), os.Getenv("P_FILE"), os.Getenv("P_CACHE")
	if db == "" {
		t.Skip()
	}
	ctx := context.Background()
	f, _ := os.Create(os.Getenv("P_OUT") + ".cpu")
	pprof.StartCPUProfile(f)
	t0 := time.Now()
	n := 20
	for range n {
		st, err := sqlite.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		bl := &Blamer{Store: st, UserID: "local", Cache: cache}
		if _, err := bl.File(ctx, file, ""); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	pprof.StopCPUProfile()
	t.Logf("%v per blame", time.Since(t0)/time.Duration(n))
	m, _ := os.Create(os.Getenv("P_OUT") + ".mem")
	pprof.Lookup("allocs").WriteTo(m, 0)
	m.Close()
}
