package team_test

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// TestTeamSetUpFromNothing: docs/team.md's set-up, on machines with no
// configuration at all. The token given to create and join is kept
// for the team, so that share, sync, invite and the readers need no
// config.toml and no flag; set-hub --token replaces it.
func TestTeamSetUpFromNothing(t *testing.T) {
	hubDB := clitest.FreshSchema(t)
	h, hubHome, _ := clitest.StartHub(t, hubDB)
	bare := func(name string) *member {
		m := newMember(t, name, h.Base, hubToken(t, hubHome, hubDB, name))
		m.fx.ExtraEnv = []string{"LOOM_USER=" + name}
		return m
	}
	alice, bob := bare("alice"), bare("bob")
	const id = "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9f11"
	importSession(t, alice, id, "wombat ledger", "why is the wombat ledger off by one", "The wombat ledger counted the header row.")

	var created struct{ ID string }
	json.Unmarshal([]byte(alice.must(t, "team", "create", "core", "--hub", h.Base, "--token", alice.tok, "--json")), &created)
	alice.must(t, "team", "share", "--content", "--yes")
	alice.must(t, "team", "sync")
	bob.must(t, "team", "join", alice.invite(t, "--label", "bob"), "--token", bob.tok, "--yes")
	bob.must(t, "team", "sync")
	if out := bob.must(t, "search", "--team", "wombat"); !strings.Contains(out, id) {
		t.Fatalf("bob's search --team wombat: %s", out)
	}
	state := filepath.Join(bob.fx.Home, "data", "teams", created.ID, "team.json")
	if fi, err := os.Stat(state); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("bob's team.json: %v %v", fi, err)
	}
	if out := bob.must(t, "team", "list", "--json"); strings.Contains(out, bob.tok) {
		t.Fatalf("team list --json shows the token: %s", out)
	}

	// A new token replaces the kept one; a bad one is refused and the
	// kept one stays.
	tok2 := hubToken(t, hubHome, hubDB, "bob")
	if r := bob.run(t, "team", "set-hub", h.Base, "--token", "loom_nonsense"); r.Code == 0 {
		t.Fatalf("set-hub with a bad token: %s", r.Stdout)
	}
	bob.must(t, "team", "sync")
	if out := bob.must(t, "team", "set-hub", h.Base, "--token", tok2); !strings.Contains(out, "the token given is kept") {
		t.Fatalf("set-hub --token: %s", out)
	}
	b, _ := os.ReadFile(state)
	if !strings.Contains(string(b), tok2) {
		t.Fatalf("set-hub --token did not keep the token")
	}
	bob.must(t, "team", "sync")
}
