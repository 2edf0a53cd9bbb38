package sessionstore_test

import (
	"context"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// A store whose log parts from the hub's after its first records takes
// a new host: the records after them are the new host's first, the same
// changes with the same stamps, a trash's view of the old host past the
// parting moved to the new; the old host counts as applied up to the
// parting; changes made later are the new host's; and a second rehome
// from the old host does nothing.
func TestMemSyncRehome(t *testing.T) {
	ctx := context.Background()
	st, _ := syncPair(t)
	old, err := st.SyncHost(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hi := func(key string) *loom.Session {
		t.Helper()
		s := &loom.Session{UserID: "alice", Key: key}
		if err := st.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "hi"}}}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	hi("cli:one") // records 1, 2
	s := hi("cli:two")
	if _, err := st.Delete(ctx, s.ID, loom.DeleteOptions{}); err != nil { // record 5, having seen 4
		t.Fatal(err)
	}
	before := syncLog(t, st)
	if len(before) != 5 {
		t.Fatalf("%d records before", len(before))
	}

	r, err := st.SyncRehome(ctx, old, 2, false)
	if err != nil || r.Old != old || r.New == old || r.Shared != 2 || r.Moved != 3 {
		t.Fatalf("rehome = %+v, %v", r, err)
	}
	if host, _ := st.SyncHost(ctx); host != r.New {
		t.Fatalf("host %s after the rehome to %s", host, r.New)
	}
	after := syncLog(t, st)
	if len(after) != 3 {
		t.Fatalf("the new host's log holds %d records, want 3", len(after))
	}
	for i, x := range after {
		was := before[i+2]
		if x.Index != int64(i+1) || x.HLC != was.HLC || x.p.Type() != was.p.Type() {
			t.Fatalf("record %d of the new host: %d %s %s, was %d %s %s", i+1, x.Index, x.HLC, x.p.Type(), was.Index, was.HLC, was.p.Type())
		}
	}
	tr, ok := after[2].p.(*synclog.Trashed)
	if !ok || tr.Seen[old] != 2 || tr.Seen[r.New] != 2 {
		t.Fatalf("the trash's view after the rehome: %+v", after[2].p)
	}
	if v, err := st.SyncApplied(ctx); err != nil || v[old] != 2 {
		t.Fatalf("applied after the rehome: %v, %v", v, err)
	}
	hi("cli:three")
	if got := syncLog(t, st); len(got) != 5 || got[4].Index != 5 {
		t.Fatalf("the new host's log after two more changes: %d records", len(got))
	}
	if again, err := st.SyncRehome(ctx, old, 2, false); err != nil || again.New != r.New || again.Moved != 0 {
		t.Fatalf("a second rehome from the old host = %+v, %v", again, err)
	}
}
