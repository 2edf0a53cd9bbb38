package team_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// TestTeamSetHub: a team's hub moves to another address (here another
// process of the same hub) with one command on the machine; an address
// that serves no such chain is refused and the old one kept. team list
// --json speaks snake_case as the rest of loom's JSON does.
func TestTeamSetHub(t *testing.T) {
	hubDB := clitest.FreshSchema(t)
	hub1, hubHome, _ := clitest.StartHub(t, hubDB)
	hub2 := clitest.StartServeProc(t, []string{"LOOM_HOME=" + t.TempDir(), "HOME=" + hubHome, "PATH=" + os.Getenv("PATH"), "LOOM_DB=" + hubDB}, "")
	alice := newMember(t, "alice", hub1.Base, hubToken(t, hubHome, hubDB, "alice"))
	alice.must(t, "team", "create", "core")
	list := func() map[string]any {
		t.Helper()
		var rows []map[string]any
		if err := json.Unmarshal([]byte(alice.must(t, "team", "list", "--json")), &rows); err != nil || len(rows) != 1 {
			t.Fatalf("team list --json: %v %v", rows, err)
		}
		return rows[0]
	}
	if row := list(); row["id"] == nil || row["name"] != "core" || row["hub"] != hub1.Base || row["ID"] != nil {
		t.Fatalf("team list --json: %v", row)
	}
	if out := alice.must(t, "team", "set-hub", hub2.Base); !strings.Contains(out, "hub "+hub2.Base+" (was "+hub1.Base+")") {
		t.Fatalf("set-hub: %s", out)
	}
	if row := list(); row["hub"] != hub2.Base {
		t.Fatalf("after set-hub: %v", row)
	}
	alice.must(t, "team", "sync")
	if r := alice.run(t, "team", "set-hub", "http://127.0.0.1:1"); r.Code == 0 || !strings.Contains(r.Stderr, "the team's hub stays "+hub2.Base) {
		t.Fatalf("set-hub to an address that serves nothing: %d %s", r.Code, r.Stderr)
	}
	if row := list(); row["hub"] != hub2.Base {
		t.Fatalf("after a refused set-hub: %v", row)
	}
}
