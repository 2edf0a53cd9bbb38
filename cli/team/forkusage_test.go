package team_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/report"
)

// TestTeamForkUsageAgrees: bob forks alice's session from the team and
// continues it. His own reports count the fork the same: loom usage,
// loom usage daily and the dashboard's usage API give the same tokens,
// and none counts alice's turns, which her session counts.
func TestTeamForkUsageAgrees(t *testing.T) {
	p := newPair(t)
	alice, bob := p.alice, p.bob
	importSession(t, alice, "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9b01", "alice's quoll", "why is the quoll slow", "The quoll cache was cold.")
	alice.must(t, "team", "share", "--content", "--yes")
	alice.must(t, "team", "sync")
	bob.must(t, "team", "sync")
	fork := strings.TrimSpace(bob.must(t, "session", "fork", "--team", "core", "0196a3b2"))
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	bob.resume(t, srv, fork, "and on a warm cache?")
	var total loom.UsageReport
	json.Unmarshal([]byte(bob.must(t, "usage", "--json")), &total)
	var daily report.Report
	json.Unmarshal([]byte(bob.must(t, "usage", "daily", "--tz", "UTC", "--json")), &daily)
	var sess report.Report
	json.Unmarshal([]byte(bob.must(t, "usage", "session", "--tz", "UTC", "--json")), &sess)
	srv2 := clitest.StartServeProcArgs(t, bob.fx.BinEnv(), "")
	resp := srv2.Request(t, "GET", "/api/v1/usage?by=day&tz=UTC", "")
	var dash report.Report
	json.NewDecoder(resp.Body).Decode(&dash)
	resp.Body.Close()
	if total.Total.InputTokens == 0 || total.Total.InputTokens != daily.Total.InputTokens || total.Total.OutputTokens != daily.Total.OutputTokens ||
		sess.Total.InputTokens != daily.Total.InputTokens || sess.Total.OutputTokens != daily.Total.OutputTokens ||
		dash.Total.InputTokens != daily.Total.InputTokens || dash.Total.OutputTokens != daily.Total.OutputTokens {
		t.Fatalf("bob's fork: loom usage %d/%d tokens, usage daily %d/%d, usage session %d/%d, the dashboard's %d/%d (%d)", total.Total.InputTokens, total.Total.OutputTokens,
			daily.Total.InputTokens, daily.Total.OutputTokens, sess.Total.InputTokens, sess.Total.OutputTokens, dash.Total.InputTokens, dash.Total.OutputTokens, resp.StatusCode)
	}
	if total.Total.InputTokens >= 1200 {
		t.Fatalf("bob's usage counts alice's turns again: %d input tokens", total.Total.InputTokens)
	}
}
