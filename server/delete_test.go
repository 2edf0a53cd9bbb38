package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// DELETE of a session another live process is writing answers 409 with
// the holder; ?force=true deletes it anyway.
func TestDeleteLockedSession(t *testing.T) {
	e := newEnv(t)
	s := e.seed(&loom.Session{UserID: "alice", Key: "http:held"}, userMsg("hello"))
	// Another handle on the same file holds the lock, as a chat would.
	other, err := sqlite.Open(context.Background(), e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lease, err := other.Lock(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(context.Background())
	resp, body := e.request("DELETE", "/api/v1/sessions/"+s.ID, e.alice, nil)
	if resp.StatusCode != 409 || !strings.Contains(string(body), `"code":"locked"`) ||
		!strings.Contains(string(body), fmt.Sprintf("process %d on %s", lease.Lock().PID, lease.Lock().Host)) {
		t.Fatalf("DELETE of a held session = %d %s", resp.StatusCode, body)
	}
	if x, err := e.st.Session(context.Background(), s.ID); err != nil || x.DeletedAt != nil {
		t.Fatalf("refused delete changed the session: %+v, %v", x, err)
	}
	resp, body = e.request("DELETE", "/api/v1/sessions/"+s.ID+"?force=true", e.alice, nil)
	if resp.StatusCode != 204 {
		t.Fatalf("forced DELETE = %d %s", resp.StatusCode, body)
	}
	if x, err := e.st.Session(context.Background(), s.ID); err != nil || x.DeletedAt == nil {
		t.Fatalf("forced delete left the session live: %+v, %v", x, err)
	}
}
