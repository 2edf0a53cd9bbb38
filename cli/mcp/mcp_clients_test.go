package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// modelSees is what an MCP client gives its model of a tool result, as
// the clients pass results on (docs/mcp.md): Claude Code and Codex CLI
// the structured content, as JSON text, whenever a result has it, and
// the text only when it has none; Gemini CLI the text.
func modelSees(client string, c clitest.MCPCall) string {
	if client != "gemini" && c.Data != nil {
		b, _ := json.Marshal(c.Data)
		return string(b)
	}
	return c.Text
}

var mcpClients = []string{"claude-code", "codex", "gemini"}

// Every client's model reads loom's guidance: how to widen a search that
// found nothing in the project, how to get more hits, the next page of
// sessions, and how to page back or read on in a session, whether the
// client passes on the text or the structured content.
func TestMCPHintsReachEveryClient(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	cs := clitest.ConnectStdio(t, fx)
	check := func(what string, c clitest.MCPCall, want ...string) {
		t.Helper()
		for _, client := range mcpClients {
			seen := modelSees(client, c)
			for _, w := range want {
				if !strings.Contains(seen, w) {
					t.Errorf("%s: %s's model does not read %q in:\n%s", what, client, w, seen)
				}
			}
		}
	}
	c := clitest.MustCall(t, cs, "search_sessions", map[string]any{"query": "deploy"})
	check("a search with nothing in the project", c, "No messages match", "in project api", "all_projects=true")
	if strings.Count(c.Text, "all_projects=true") != 1 {
		t.Errorf("the text says how to widen %d times:\n%s", strings.Count(c.Text, "all_projects=true"), c.Text)
	}
	check("a search with more hits", clitest.MustCall(t, cs, "search_sessions", map[string]any{"query": "clock", "limit": 1}), "before_seq=", "more: there are more than 1 matches")
	c = clitest.MustCall(t, cs, "list_sessions", map[string]any{"limit": 2, "all_projects": true})
	check("a list with more sessions", c, "call again with cursor=", c.Data["next"].(string))
	check("a list with nothing", clitest.MustCall(t, cs, "list_sessions", map[string]any{"query": "no such title"}), "all_projects=true")
	check("the newest messages", clitest.MustCall(t, cs, "read_session", map[string]any{"ref": fx.Main.ID, "limit": 3}), "before_seq=")
}

// read_session with turn reads the turn from its start (its prompt
// first), says how to read on when the turn is longer than limit, and
// reads on with after_seq; no message's text starts with blank lines.
func TestMCPReadTurnFromItsStart(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	cs := clitest.ConnectStdio(t, fx)
	seqs := func(c clitest.MCPCall) []int {
		var out []int
		for _, m := range c.Data["messages"].([]any) {
			out = append(out, int(m.(map[string]any)["seq"].(float64)))
		}
		return out
	}
	c := clitest.MustCall(t, cs, "read_session", map[string]any{"ref": fx.Main.ID, "turn": 1, "limit": 2})
	if got := seqs(c); len(got) != 2 || got[0] != 1 || got[1] != 2 || !strings.Contains(c.Text, "Why does TestRetry flake?") {
		t.Fatalf("turn 1, limit 2 = seqs %v:\n%s", got, c.Text)
	}
	for _, client := range mcpClients {
		if seen := modelSees(client, c); !strings.Contains(seen, "turn=1 after_seq=2") {
			t.Errorf("%s's model is not told how to read on in the turn:\n%s", client, seen)
		}
	}
	if c.Data["next_after"] != float64(2) {
		t.Errorf("next_after = %v, want 2", c.Data["next_after"])
	}
	c = clitest.MustCall(t, cs, "read_session", map[string]any{"ref": fx.Main.ID, "turn": 1, "limit": 2, "after_seq": 2})
	if got := seqs(c); len(got) != 2 || got[0] != 3 || got[1] != 4 || strings.Contains(c.Text, "after_seq=") {
		t.Fatalf("turn 1 after seq 2 = seqs %v:\n%s", got, c.Text)
	}
	clitest.WantToolError(t, cs, "read_session", map[string]any{"ref": fx.Main.ID, "before_seq": 3, "after_seq": 1}, "not both")

	// A reply that starts and ends with blank lines, as imported ones
	// often do, reads without them.
	st := fx.OpenStore(t)
	s := &loom.Session{ID: clitest.IDAt(clitest.Base.Add(2 * time.Hour)), UserID: "local", Key: "cli:api:blank", Project: fx.Proj, Cwd: fx.Project}
	if err := st.Append(t.Context(), s, clitest.TextMsg(loom.RoleUser, "hi", clitest.Base.Add(2*time.Hour)),
		clitest.TextMsg(loom.RoleAssistant, "\n\nhello there\n\n", clitest.Base.Add(2*time.Hour))); err != nil {
		t.Fatal(err)
	}
	st.Close()
	c = clitest.MustCall(t, cs, "read_session", map[string]any{"ref": s.ID, "turn": 1})
	if !strings.Contains(c.Text, "]\nhello there\n") || strings.Contains(c.Text, "]\n\n") {
		t.Errorf("a message starts with blank lines:\n%s", c.Text)
	}
}
