package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// filesHold reports which of the store's files (the database, its WAL)
// hold word.
func filesHold(t *testing.T, st *sqlite.Store, word string) []string {
	t.Helper()
	var in []string
	for _, f := range []string{st.Path(), st.Path() + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if strings.Contains(string(b), word) {
			in = append(in, f)
		}
	}
	return in
}

// A scrub leaves none of the text a part update replaced in the store's
// files. While another connection reads the store from the WAL all
// along, the WAL cannot be emptied: the scrub says so (ErrWALBusy) and
// keeps the store marked, and the next ScrubIfPending, once the reader
// is done, empties it.
func TestScrubAndABusyWAL(t *testing.T) {
	ctx := context.Background()
	st := tempStore(t)
	const word = "zorblaxquux"
	// A title of its own: one made from the first prompt would hold it.
	s := &loom.Session{UserID: "u", Key: "cli:x", Title: "a title"}
	part := loom.Part{ID: "p1", Type: loom.PartText, Text: strings.Repeat("the word "+word+" ", 50)}
	if err := st.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{part}}); err != nil {
		t.Fatal(err)
	}
	part.Text = "[REDACTED:x]"
	if err := st.UpdatePart(ctx, s.ID, 1, part); err != nil {
		t.Fatal(err)
	}
	if len(filesHold(t, st, word)) == 0 {
		t.Fatal("before the scrub no file holds the word: the check finds nothing")
	}

	// A reader whose snapshot is in the WAL, held open.
	other, err := sql.Open("sqlite", "file:"+st.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	rtx, err := other.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := rtx.QueryRow(`SELECT count(*) FROM messages`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	// The store's writer waits for it a moment, not 30 s.
	if _, err := st.DB().Exec(`PRAGMA busy_timeout = 50`); err != nil {
		t.Fatal(err)
	}
	if err := st.MarkScrub(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Scrub(ctx); !errors.Is(err, sqlite.ErrWALBusy) || !strings.Contains(err.Error(), "-wal") {
		t.Fatalf("scrub with a reader on the WAL: %v, want ErrWALBusy naming the log", err)
	}
	if f := filesHold(t, st, word); len(f) != 1 || !strings.HasSuffix(f[0], "-wal") {
		t.Errorf("with a reader on the WAL the word is in %v, want the WAL only", f)
	}
	rtx.Rollback()
	if done, err := st.ScrubIfPending(ctx); !done || err != nil {
		t.Fatalf("the next ScrubIfPending: %v, %v", done, err)
	}
	if f := filesHold(t, st, word); len(f) > 0 {
		t.Errorf("after the scrub %v hold the word", f)
	}
	if fi, err := os.Stat(st.Path() + "-wal"); err != nil || fi.Size() != 0 {
		t.Errorf("the WAL after the scrub: %v, %v", fi, err)
	}
	if done, err := st.ScrubIfPending(ctx); done || err != nil {
		t.Errorf("a scrub with nothing pending: %v, %v", done, err)
	}
}
