package syncrun_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
	"github.com/loomhq/loom/syncrun"
)

// The hub's operator edits its records table: one record of a host has
// a byte of its ciphertext changed, the next loses its signature (its
// header still says signed). Every machine refuses both, sets them
// aside in one result each naming the host, the index and why, and
// applies the host's records after them: the sync succeeds. Records of
// another host sealed as a loom before signing wrote them (no
// signature, a version 1 header) are read as before.
func TestHubCannotForgeRecords(t *testing.T) {
	ctx := context.Background()
	hubStore, _, c := hubFor(t)
	key, hi, m := syncing(t, "a.db", "old.db", "reader.db")
	a, old, reader := m[0], m[1], m[2]
	// Two records a session (made, appended): a's records 3 and 4 are
	// cli:a2's, 5 and 6 cli:a3's.
	hi(a, "cli:a1")
	hi(a, "cli:a2")
	hi(a, "cli:a3")
	if _, err := syncrun.Sync(ctx, c, a, key); err != nil {
		t.Fatal(err)
	}
	hostA, _ := a.SyncHost(ctx)

	// What a loom before signing sent: sealed, a version 1 header.
	hi(old, "cli:old")
	hostOld, _ := old.SyncHost(ctx)
	logged, err := old.SyncLog(ctx, 0, 100)
	if err != nil || len(logged) == 0 {
		t.Fatalf("old's log = %v, %v", logged, err)
	}
	var unsigned []loom.SyncRecord
	for _, r := range logged {
		h := synclog.Header{Host: hostOld, Index: r.Index, HLC: r.HLC, KeyID: key.ID()}
		hb, _ := h.MarshalBinary()
		if hb[0] != synclog.HeaderVersion {
			t.Fatalf("an unsigned header of version %d", hb[0])
		}
		body, err := synclog.SealEncoded(key, h, r.Payload)
		if err != nil {
			t.Fatal(err)
		}
		unsigned = append(unsigned, loom.SyncRecord{Host: string(hostOld), Index: r.Index, Header: hb, Body: body})
	}
	if _, err := c.Own().Put(ctx, unsigned); err != nil {
		t.Fatal(err)
	}

	// The operator, in the hub's database.
	db := hubStore.DB()
	var body []byte
	if err := db.QueryRowContext(ctx, `SELECT body FROM sync_records WHERE host_id = ? AND idx = 3`, string(hostA)).Scan(&body); err != nil {
		t.Fatal(err)
	}
	body[len(body)-1] ^= 1
	if _, err := db.ExecContext(ctx, `UPDATE sync_records SET body = ? WHERE host_id = ? AND idx = 3`, body, string(hostA)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE sync_records SET body = substr(body, 65) WHERE host_id = ? AND idx = 4`, string(hostA)); err != nil {
		t.Fatal(err)
	}

	res, err := syncrun.Sync(ctx, c, reader, key)
	if err != nil {
		t.Fatalf("a sync past two forged records failed: %v", err)
	}
	if len(res.SetAside) != 2 {
		t.Fatalf("set aside %+v, want records 3 and 4 of host %s", res.SetAside, hostA)
	}
	for i, x := range res.SetAside {
		if x.Host != string(hostA) || x.Index != int64(3+i) || x.Author != "" || !strings.Contains(x.Why, "not signed by its writer's key") {
			t.Errorf("set aside %d = %+v, want record %d of %s, not signed by its writer's key", i, x, 3+i, hostA)
		}
	}
	if keys, want := keysOf(t, reader), []string{"cli:a1", "cli:a3", "cli:old"}; !slices.Equal(keys, want) {
		t.Errorf("the reader holds %v, want %v (the forged session's records set aside, the rest applied)", keys, want)
	}
	// Said once: the next sync reads after them.
	if res, err := syncrun.Sync(ctx, c, reader, key); err != nil || len(res.SetAside) != 0 {
		t.Errorf("the next sync = %+v, %v", res, err)
	}
}
