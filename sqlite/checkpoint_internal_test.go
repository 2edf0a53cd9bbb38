package sqlite

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/testseed"
)

// A big import's commit leaves the copy of its pages into the database
// file to the checkpointer (checkpoint.go), a small one's and the next
// write that is not an import checkpoint as SQLite does by default, and
// closing the
// store leaves every row in its file and no WAL behind: over imports of
// generated sizes, each followed or not by ordinary writes.
func TestImportCheckpointsBehindTheWriter(t *testing.T) {
	ctx := context.Background()
	r := testseed.Rand(t)
	path := t.TempDir() + "/s.db"
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	autocheckpoint := func() int {
		t.Helper()
		var n int
		if err := st.writer.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := autocheckpoint(); n != walAutocheckpoint {
		t.Fatalf("opened: wal_autocheckpoint %d, want %d", n, walAutocheckpoint)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	want := 0
	var sessions []*loom.Session
	for round := range 2 + r.IntN(3) {
		var batch []*loom.SessionData
		for i := range 1 + r.IntN(4) {
			id := loom.NewIDAt(now)
			s := &loom.Session{ID: id, UserID: "u", Key: fmt.Sprintf("cli:r%d-%d", round, i), Surface: "cli", Kind: loom.KindMain,
				CreatedAt: now, Title: "t"}
			var msgs []*loom.Message
			for j := 1; j <= 20+r.IntN(200); j++ {
				now = now.Add(time.Second)
				// Text of a few kilobytes, so that a batch is more pages
				// than the default checkpoint's 1000 at times.
				text := strings.Repeat(fmt.Sprintf("word%d ", r.IntN(1000)), 100+r.IntN(1500))
				msgs = append(msgs, &loom.Message{ID: loom.NewID(), SessionID: id, Seq: int64(j), Role: loom.RoleUser, Turn: j, CreatedAt: now,
					Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: text}}})
			}
			s.MessageCount, s.TurnCount, s.UpdatedAt = len(msgs), len(msgs), now
			want += len(msgs)
			batch = append(batch, &loom.SessionData{Session: s, Messages: msgs})
			sessions = append(sessions, s)
		}
		if err := st.Import(ctx, batch); err != nil {
			t.Fatal(err)
		}
		size := 0
		for _, d := range batch {
			for _, m := range d.Messages {
				size += m.Size()
			}
		}
		// A big import's commit is the checkpointer's to copy; a small
		// one's is as any write's.
		if n, big := autocheckpoint(), size >= bigImport; big && n != 0 || !big && n != walAutocheckpoint {
			t.Fatalf("round %d: after an import of %d bytes the writer's wal_autocheckpoint is %d (the big ones' commits are the checkpointer's, from %d bytes)", round, size, n, bigImport)
		}
		if r.IntN(2) == 0 {
			title := fmt.Sprintf("renamed %d", round)
			if _, err := st.UpdateSession(ctx, sessions[r.IntN(len(sessions))].ID, loom.SessionUpdate{Title: &title}); err != nil {
				t.Fatal(err)
			}
			if n := autocheckpoint(); n != walAutocheckpoint {
				t.Fatalf("round %d: after an ordinary write the writer's wal_autocheckpoint is %d, want %d", round, n, walAutocheckpoint)
			}
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		t.Fatalf("closed: a WAL of %d bytes is left", fi.Size())
	}
	again, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	var n int
	var check string
	if err := again.reader.QueryRowContext(ctx, `SELECT count(*) FROM messages`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := again.reader.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil {
		t.Fatal(err)
	}
	if n != want || check != "ok" {
		t.Fatalf("opened again: %d messages (want %d), integrity %q", n, want, check)
	}
}
