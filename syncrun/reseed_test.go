package syncrun_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/syncrun"
)

// A store keeps the records of other hosts it pulls, also those it
// applied before it kept any (read back from the hub while it holds
// them), and gives a hub that lost them everything it keeps: a store
// that joins that hub later holds a machine's messages though that
// machine never synced with it.
func TestKeepAndReseed(t *testing.T) {
	ctx := context.Background()
	_, _, c := hubFor(t)
	key, err := envelope.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	a, b := open(t, "a.db"), open(t, "b.db")
	ahost, err := a.EnableSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := &loom.Session{UserID: "alice", Key: "cli:api"}
	for _, text := range []string{"a question", "an answer", "another question"} {
		if err := a.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}); err != nil {
			t.Fatal(err)
		}
	}
	syncOnce(t, c, a, key)
	last, err := a.SyncLast(ctx)
	if err != nil {
		t.Fatal(err)
	}
	syncOnce(t, c, b, key)
	if kept, err := b.SyncKept(ctx); err != nil || kept[ahost] != last {
		t.Fatalf("b keeps %v of a's %d records, %v", kept, last, err)
	}

	// As a store that synced with a loom that kept nothing: the next
	// sync keeps what it applied, from the hub.
	raw, err := sql.Open("sqlite", b.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`DELETE FROM sync_kept; DELETE FROM sync_state WHERE name LIKE 'kept %'`); err != nil {
		t.Fatal(err)
	}
	if kept, _ := b.SyncKept(ctx); len(kept) != 0 {
		t.Fatalf("kept after the delete: %v", kept)
	}
	syncOnce(t, c, b, key)
	if kept, err := b.SyncKept(ctx); err != nil || kept[ahost] != last {
		t.Fatalf("b keeps %v of a's %d records after keeping them back, %v", kept, last, err)
	}

	// Records kept out of order count once those before them are.
	recs, _, err := c.Own().Records(ctx, string(ahost), 0, 10)
	if err != nil || int64(len(recs)) != last {
		t.Fatalf("the hub's records of a: %d, %v", len(recs), err)
	}
	e := open(t, "e.db")
	if err := e.SyncKeep(ctx, recs[2:]); err != nil {
		t.Fatal(err)
	}
	if kept, _ := e.SyncKept(ctx); kept[ahost] != 0 {
		t.Fatalf("kept with a gap: %v", kept)
	}
	if err := e.SyncKeep(ctx, recs[:2]); err != nil {
		t.Fatal(err)
	}
	if kept, _ := e.SyncKept(ctx); kept[ahost] != last {
		t.Fatalf("kept once the gap is filled: %v, want %d", kept, last)
	}

	// A new hub: b sends it a's records, which a never sent it.
	_, _, c2 := hubFor(t)
	if _, hosts, err := syncrun.Status(ctx, c2, b); err != nil || len(hosts) != 2 || hosts[1].Host != string(ahost) || hosts[1].HubLacks != last {
		t.Fatalf("status before the reseed: %+v, %v", hosts, err)
	}
	if res := syncOnce(t, c2, b, key); res.Reseeded != int(last) {
		t.Fatalf("b sent the new hub %d of a's records, want %d", res.Reseeded, last)
	}
	if res := syncOnce(t, c2, b, key); res.Reseeded != 0 || res.Pushed != 0 {
		t.Fatalf("a second sync sent %d and %d records again", res.Pushed, res.Reseeded)
	}
	d := open(t, "d.db")
	syncOnce(t, c2, d, key)
	got, err := d.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil || len(got) != 3 || got[2].Text() != "another question" {
		t.Fatalf("the store that joined the new hub holds %d of a's messages, %v", len(got), err)
	}
}

// syncOnce sets sync up on st and syncs it through c, failing on an
// error.
func syncOnce(t *testing.T, c *hub.Client, st syncrun.Store, key envelope.Key) syncrun.Result {
	t.Helper()
	res, err := syncrun.Once(context.Background(), c, st, key)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
