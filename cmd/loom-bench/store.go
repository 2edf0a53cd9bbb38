package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// importRateOf imports n generated messages (sessions of 1,000) into a
// fresh store in batches of ten sessions and returns messages per second;
// generating them is not timed.
func importRateOf(ctx context.Context, path string, n int) (float64, error) {
	removeStore(path)
	defer os.Remove(path)
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return importRate(importBatches(n), n, func(b []*loom.SessionData) error { return st.Import(ctx, b) })
}

// importRate hands batches, n messages in all, to put and returns
// messages per second: only put is timed.
func importRate(batches [][]*loom.SessionData, n int, put func([]*loom.SessionData) error) (float64, error) {
	runtime.GC()
	t0 := time.Now()
	for _, b := range batches {
		if err := put(b); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

// removeStore removes the SQLite file at path with its WAL and
// shared-memory files.
func removeStore(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
}

// importBatches generates the n messages an import figure imports: in
// sessions of 1,000, ten sessions to an Import.
func importBatches(n int) [][]*loom.SessionData {
	g := newGenerator(11)
	var batches [][]*loom.SessionData
	var batch []*loom.SessionData
	for i := 0; i < n/1000; i++ {
		batch = append(batch, g.session("bench", 1000, loom.Project{ID: "1", Name: "p", Root: "/p"}))
		if len(batch) == 10 {
			batches = append(batches, batch)
			batch = nil
		}
	}
	if len(batch) > 0 {
		batches = append(batches, batch)
	}
	return batches
}

func expectHits(h []loom.SearchHit, err error) error {
	if err == nil && len(h) == 0 {
		return fmt.Errorf("search found nothing")
	}
	return err
}

func textMsg(s string) *loom.Message {
	return &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: s}}}
}

func importNoteText(rate float64) string {
	if rate == 0 {
		return "the store already existed: no import figure this run"
	}
	return fmt.Sprintf("%.0f messages/s", rate)
}

// ensureStore generates the workload into c.db unless it is already
// there, and returns the big session's id and the import rate.
func ensureStore(ctx context.Context, c config) (string, float64, error) {
	if _, err := os.Stat(c.db); err == nil {
		st, err := sqlite.Open(ctx, c.db)
		if err != nil {
			return "", 0, err
		}
		defer st.Close()
		var id string
		if err := st.DB().QueryRowContext(ctx, `SELECT id FROM sessions WHERE message_count = ? AND kind = 'main' LIMIT 1`, c.big).Scan(&id); err != nil {
			return "", 0, fmt.Errorf("%s exists but holds no %d-message session; remove it to regenerate", c.db, c.big)
		}
		return id, 0, nil
	}
	st, err := sqlite.Open(ctx, c.db)
	if err != nil {
		return "", 0, err
	}
	defer st.Close()
	var imported int
	var spent time.Duration
	bigID, err := generate(c, "", func(batch []*loom.SessionData) error {
		n := 0
		for _, d := range batch {
			n += len(d.Messages)
		}
		t0 := time.Now()
		if err := st.Import(ctx, batch); err != nil {
			return err
		}
		spent += time.Since(t0)
		imported += n
		return nil
	})
	if err != nil {
		return "", 0, err
	}
	// As loom import does after a large import, so that the appends
	// measured do not pay for merging the imported index.
	t0 := time.Now()
	if err := st.MergeIndex(ctx); err != nil {
		return "", 0, err
	}
	fmt.Fprintf(os.Stderr, "merged the search index in %v\n", time.Since(t0).Round(time.Millisecond))
	// No ANALYZE: loom never runs it (its statements fix their plans),
	// so a user's store has no statistics, and every connection that
	// opens a store that has them reads them all first (sqlite_stat4:
	// 0.3 ms of a cold open on this schema). Neither store is analyzed.
	return bigID, float64(imported) / spent.Seconds(), nil
}
