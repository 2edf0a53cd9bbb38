package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/query"
)

// The walk over a search's matches stops when its context ends, also
// between two matches far apart: the driver interrupts only a
// statement's first step, so the walk runs whole inside it.
func TestNewestStops(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
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

// A broad search reads its newest matches' messages by body, whatever
// the store's statistics: a store loom made has none (it never runs
// ANALYZE), and there the planner read every message of the user.
func TestBroadSearchReadsMatchesByBody(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	// A page of 20 hits of alice's, as the search reads them.
	filters := query.New(dialect)
	filters.Search(loom.SearchQuery{UserID: "alice"})
	args := filters.Args
	for i := range 20 {
		args = append(args, i+1)
	}
	rows, err := st.DB().QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT m.seq`+detailFrom+filters.String()+
		` AND m.body_id IN (`+inList(20)+`) ORDER BY m.body_id DESC, m.created_at DESC LIMIT 20`, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	if len(steps) == 0 || !strings.HasPrefix(steps[0], "SEARCH m USING") || !strings.Contains(steps[0], "messages_body") {
		t.Fatalf("the broad search's rows are read by\n%s\nwant the messages by body first", strings.Join(steps, "\n"))
	}
}

// openTemp opens a new store in a temporary directory, closed when the
// test ends.
func openTemp(t *testing.T) *Store {
	t.Helper()
	st, err := Open(context.Background(), filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// A title search counts the words a session's title or description
// holds with one call of wordsIn a session: it must count what the two
// LIKEs a word it replaced counted, ASCII letters of any case and any
// other character as it is. (The words are letters and digits: never a
// wildcard.)
func TestWordsInIsLike(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	texts := []string{"", "Configure the Pool", "WEBSOCKET reconnect storms", "Ärger über Öl", "ärger", "café CAFÉ", "naïve Kelvin \u212a", "a_b%c", "poolpool"}
	words := [][]string{{"pool"}, {"configur", "pool"}, {"ärger"}, {"Ärger"}, {"öl", "über"}, {"café"}, {"é"}, {"k"}, {"pool", "pool"}, {"websocket", "storm", "night"}}
	for _, title := range texts {
		for _, desc := range []string{"", "Pool and Storms"} {
			for _, ws := range words {
				var like strings.Builder
				args := []any{title, desc, strings.Join(ws, query.WordsSep)}
				like.WriteString("0")
				for _, w := range ws {
					like.WriteString(" + CASE WHEN ? LIKE ? OR ? LIKE ? THEN 1 ELSE 0 END")
					args = append(args, title, "%"+w+"%", desc, "%"+w+"%")
				}
				var got, want int
				if err := (reads{st}).QueryRowContext(ctx, "SELECT "+wordsInName+"(?, ?, ?), "+like.String(), args...).Scan(&got, &want); err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("words %q in %q, %q: %d; LIKE finds %d", ws, title, desc, got, want)
				}
			}
		}
	}
}
