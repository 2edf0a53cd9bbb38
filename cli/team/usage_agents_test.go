package team_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/agents"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// TestTeamUsageEveryAgent: alice imports the sessions of every agent
// loom reads (each format's own test files: files the real programs
// wrote, or built to their source), moves them into the shared project
// and shares it; on carol's machine the team's usage, by agent, is
// alice's own report by agent, to the token and the cent, for every
// agent whose sessions carry usage, and the team's total is hers.
func TestTeamUsageEveryAgent(t *testing.T) {
	clitest.SkipOnPostgres(t, "the members' stores are SQLite in either pass; the hub is on PostgreSQL in both")
	hubDB := clitest.FreshSchema(t)
	hub, hubHome, _ := clitest.StartHub(t, hubDB)
	alice := newMember(t, "alice", hub.Base, hubToken(t, hubHome, hubDB, "alice"))
	carol := newMember(t, "carol", hub.Base, hubToken(t, hubHome, hubDB, "carol"))

	imported := 0
	for _, f := range agents.Formats() {
		pkg := reflect.TypeOf(f).PkgPath()
		dir, err := filepath.Abs(filepath.Join("..", "..", strings.TrimPrefix(pkg, "github.com/loomhq/loom/"), "testdata"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		// A format's test files include broken ones, reported and
		// passed over: what imports is what is compared.
		if r := alice.run(t, "session", "import", "--from", f.Tool(), dir); r.Code == 0 {
			imported++
		} else {
			t.Logf("%s: exit %d: %.200s", f.Tool(), r.Code, r.Stderr)
		}
	}
	if imported < 40 {
		t.Fatalf("the test files of %d agents imported, want at least 40", imported)
	}
	var all []*loom.Session
	if err := json.Unmarshal([]byte(alice.must(t, "session", "list", "-a", "--all-projects", "--limit", "0", "--json")), &all); err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Project.Root != alice.fx.Project {
			alice.must(t, "session", "move", s.ID, alice.fx.Project)
		}
	}

	var created struct{ ID string }
	json.Unmarshal([]byte(alice.must(t, "team", "create", "core", "--json")), &created)
	alice.admit(t, carol)
	alice.must(t, "team", "share", "--content", "--yes")
	alice.must(t, "team", "sync")
	carol.must(t, "team", "sync")

	var own, team loom.UsageReport
	if err := json.Unmarshal([]byte(alice.must(t, "usage", "--no-import", "--json")), &own); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(carol.must(t, "usage", "--team", "core", "--json")), &team); err != nil {
		t.Fatal(err)
	}
	same := func(a, b loom.Usage) bool {
		return a.InputTokens == b.InputTokens && a.OutputTokens == b.OutputTokens && a.CacheReadTokens == b.CacheReadTokens &&
			a.CacheWriteTokens == b.CacheWriteTokens && math.Abs(a.CostUSD-b.CostUSD) < 1e-6
	}
	bySurface := func(rows []loom.UsageRow) map[string]loom.Usage {
		m := map[string]loom.Usage{}
		for _, r := range rows {
			m[r.Key] = r.Usage
		}
		return m
	}
	mine, theirs := bySurface(own.BySurface), bySurface(team.BySurface)
	withUsage := 0
	for agent, u := range mine {
		if u.InputTokens+u.OutputTokens == 0 && u.CostUSD == 0 {
			continue
		}
		withUsage++
		if !same(u, theirs[agent]) {
			t.Errorf("%s: alice's own usage %+v, the team's on carol's machine %+v", agent, u, theirs[agent])
		}
	}
	if !same(own.Total, team.Total) {
		t.Errorf("alice's own total %+v, the team's %+v", own.Total, team.Total)
	}
	t.Logf("%d agents' test files imported, %d sessions, %d agents with usage: equal by agent and in total", imported, len(all), withUsage)
	if withUsage < 20 {
		t.Errorf("only %d agents' sessions carry usage; want at least 20", withUsage)
	}
}
