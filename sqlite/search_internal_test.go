package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// The walk over a search's matches stops when its context ends, also
// between two matches far apart: the driver interrupts only a
// statement's first step, so the walk runs whole inside it.
func TestNewestStops(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Rows 1 and 400,000,000 of a count match, a walk of minutes between
	// them.
	const slow = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 400000000)
		SELECT x AS id FROM c WHERE x % 399999999 = 1`
	c, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	ids, err := st.newest(c, slow)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("walk = %v, %v; want the context's error", ids, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("walk stopped %v after it started", d)
	}
}
