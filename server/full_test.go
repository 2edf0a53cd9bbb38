package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
)

// A hub whose store cannot grow (SQLite's file at max_page_count, which
// SQLite answers as it does a full disk, SQLITE_FULL) answers a sync push
// 507 saying the hub is out of disk space, which the sync client reports
// as it is, in one line; the rest of the API's writes answer 507 too,
// saying the server is. The log has the store's own words. With room
// again, the push goes through.
func TestOutOfSpace(t *testing.T) {
	e := newEnv(t)
	s := e.seed(&loom.Session{UserID: "alice", Key: "http:full"}, userMsg("go"))
	host := loom.NewID()
	big := func(from, to int64) []wireRecord {
		recs := wireRecs(host, from, to)
		for i := range recs {
			recs[i].Body = []byte(strings.Repeat(fmt.Sprintf("sealed %d ", i), 8<<10))
		}
		return recs
	}
	e.push(e.alice, big(1, 2))

	var pages int
	if err := e.st.DB().QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.DB().Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		t.Fatal(err)
	}
	resp, b := e.request("POST", "/api/v1/sync/records", e.alice, batch(big(3, 10)))
	wantError(t, "push to a full hub", resp, b, 507, loom.ENOSPACE)
	if want := `"the hub is out of disk space: free some on the hub's machine, then sync again"`; !strings.Contains(string(b), want) {
		t.Errorf("push to a full hub: %s, want %s", b, want)
	}
	c := &hub.Client{URL: e.ts.URL, Token: e.alice}
	recs := make([]loom.SyncRecord, 0, 8)
	for _, r := range big(3, 10) {
		recs = append(recs, r.Store())
	}
	_, err := c.Own().Put(context.Background(), recs)
	if want := "hub " + e.ts.URL + ": the hub is out of disk space: free some on the hub's machine, then sync again"; loom.ErrorCode(err) != loom.ENOSPACE || loom.ErrorMessage(err) != want {
		t.Errorf("the sync client: %v (%s), want %q", err, loom.ErrorCode(err), want)
	}
	resp, b = e.request("PATCH", "/api/v1/sessions/"+s.ID, e.alice, map[string]string{"description": strings.Repeat("d", loom.MaxDescriptionBytes)})
	wantError(t, "a description on a full disk", resp, b, 507, loom.ENOSPACE)
	if want := `"the server is out of disk space: free some on its machine, then try again"`; !strings.Contains(string(b), want) {
		t.Errorf("a description on a full disk: %s, want %s", b, want)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "out of disk space") || !strings.Contains(logs, "database or disk is full") || !strings.Contains(logs, e.dbPath) {
		t.Errorf("the log does not say the store is full, and where:\n%s", logs)
	}

	if _, err := e.st.DB().Exec(`PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	if got := e.push(e.alice, big(3, 10)); got.Stored != 8 || got.Last[host] != 10 {
		t.Errorf("push with room again: %+v", got)
	}
}
