package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// A transaction that ends with an error leaves the store as it found
// it, whatever it wrote; one that ends without keeps what it wrote. The
// rules rely on it: a write they refuse half-way leaves nothing.
func TestFailedTransactionChangesNothing(t *testing.T) {
	ctx := context.Background()
	s := New()
	if _, err := s.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	x := &loom.Session{UserID: "alice", Key: "cli:s"}
	if err := s.Append(ctx, x, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "kept"}}}); err != nil {
		t.Fatal(err)
	}
	last, _ := s.SyncLast(ctx)
	write := func(fail error) error {
		w, err := engine{s}.Begin(ctx)
		if err != nil {
			return err
		}
		row := &loom.Session{ID: loom.NewID(), UserID: "alice", Kind: loom.KindMain, CreatedAt: s.Now(), UpdatedAt: s.Now()}
		if err := w.CreateSession(ctx, row); err != nil {
			return w.End(err)
		}
		b, err := synclog.Encode(&synclog.SessionChanged{SessionID: x.ID, Title: new("renamed")})
		if err != nil {
			return w.End(err)
		}
		if _, err := w.AddLogRow(ctx, w.Clock().Now(), b); err != nil {
			return w.End(err)
		}
		if err := w.UpdateRow(ctx, x.ID, loom.SessionUpdate{Title: new("renamed")}, s.Now()); err != nil {
			return w.End(err)
		}
		if _, err := w.Trash(ctx, []string{x.ID}, s.Now()); err != nil {
			return w.End(err)
		}
		return w.End(fail)
	}
	boom := errors.New("boom")
	if err := write(boom); !errors.Is(err, boom) {
		t.Fatalf("the failed write ended with %v", err)
	}
	all := func() []*loom.Session {
		t.Helper()
		var out []*loom.Session
		for _, deleted := range []bool{false, true} {
			ss, err := s.Sessions(ctx, loom.SessionFilter{UserID: "alice", Archived: loom.WithArchived, Deleted: deleted})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ss...)
		}
		return out
	}
	if ss := all(); len(ss) != 1 || ss[0].Title != "kept" || ss[0].DeletedAt != nil {
		b, _ := json.Marshal(ss)
		t.Fatalf("after a failed write the store holds %d sessions: %s", len(ss), b)
	}
	if now, _ := s.SyncLast(ctx); now != last {
		t.Fatalf("the log went from %d to %d records", last, now)
	}
	if err := write(nil); err != nil {
		t.Fatal(err)
	}
	if ss := all(); len(ss) != 2 {
		t.Fatalf("after a write the store holds %d sessions", len(ss))
	}
	if cur, err := s.Session(ctx, x.ID); err != nil || cur.Title != "renamed" || cur.DeletedAt == nil {
		t.Fatalf("the written session: %+v, %v", cur, err)
	}
}
