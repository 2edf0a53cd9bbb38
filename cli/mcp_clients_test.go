package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// modelSees is what an MCP client gives its model of a tool result, as
// the clients pass results on (docs/mcp.md): Claude Code and Codex CLI
// the structured content, as JSON text, whenever a result has it, and
// the text only when it has none; Gemini CLI the text.
func modelSees(client string, c mcpCall) string {
	if client != "gemini" && c.data != nil {
		b, _ := json.Marshal(c.data)
		return string(b)
	}
	return c.text
}

var mcpClients = []string{"claude-code", "codex", "gemini"}

// Every client's model reads loom's guidance: how to widen a search that
// found nothing in the project, how to get more hits, the next page of
// sessions, and how to page back or read on in a session, whether the
// client passes on the text or the structured content.
func TestMCPHintsReachEveryClient(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	cs := connectStdio(t, fx)
	check := func(what string, c mcpCall, want ...string) {
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
	c := mustCall(t, cs, "search_sessions", map[string]any{"query": "deploy"})
	check("a search with nothing in the project", c, "No messages match", "in project api", "all_projects=true")
	if strings.Count(c.text, "all_projects=true") != 1 {
		t.Errorf("the text says how to widen %d times:\n%s", strings.Count(c.text, "all_projects=true"), c.text)
	}
	check("a search with more hits", mustCall(t, cs, "search_sessions", map[string]any{"query": "clock", "limit": 1}), "before_seq=", "more: there are more than 1 matches")
	c = mustCall(t, cs, "list_sessions", map[string]any{"limit": 2, "all_projects": true})
	check("a list with more sessions", c, "call again with cursor=", c.data["next"].(string))
	check("a list with nothing", mustCall(t, cs, "list_sessions", map[string]any{"query": "no such title"}), "all_projects=true")
	check("the newest messages", mustCall(t, cs, "read_session", map[string]any{"ref": fx.main.ID, "limit": 3}), "before_seq=")
}

// read_session with turn reads the turn from its start (its prompt
// first), says how to read on when the turn is longer than limit, and
// reads on with after_seq; no message's text starts with blank lines.
func TestMCPReadTurnFromItsStart(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	cs := connectStdio(t, fx)
	seqs := func(c mcpCall) []int {
		var out []int
		for _, m := range c.data["messages"].([]any) {
			out = append(out, int(m.(map[string]any)["seq"].(float64)))
		}
		return out
	}
	c := mustCall(t, cs, "read_session", map[string]any{"ref": fx.main.ID, "turn": 1, "limit": 2})
	if got := seqs(c); len(got) != 2 || got[0] != 1 || got[1] != 2 || !strings.Contains(c.text, "Why does TestRetry flake?") {
		t.Fatalf("turn 1, limit 2 = seqs %v:\n%s", got, c.text)
	}
	for _, client := range mcpClients {
		if seen := modelSees(client, c); !strings.Contains(seen, "turn=1 after_seq=2") {
			t.Errorf("%s's model is not told how to read on in the turn:\n%s", client, seen)
		}
	}
	if c.data["next_after"] != float64(2) {
		t.Errorf("next_after = %v, want 2", c.data["next_after"])
	}
	c = mustCall(t, cs, "read_session", map[string]any{"ref": fx.main.ID, "turn": 1, "limit": 2, "after_seq": 2})
	if got := seqs(c); len(got) != 2 || got[0] != 3 || got[1] != 4 || strings.Contains(c.text, "after_seq=") {
		t.Fatalf("turn 1 after seq 2 = seqs %v:\n%s", got, c.text)
	}
	wantToolError(t, cs, "read_session", map[string]any{"ref": fx.main.ID, "before_seq": 3, "after_seq": 1}, "not both")

	// A reply that starts and ends with blank lines, as imported ones
	// often do, reads without them.
	st := fx.openStore(t)
	s := &loom.Session{ID: idAt(base.Add(2 * time.Hour)), UserID: "local", Key: "cli:api:blank", Project: fx.proj, Cwd: fx.project}
	if err := st.Append(t.Context(), s, textMsg(loom.RoleUser, "hi", base.Add(2*time.Hour)),
		textMsg(loom.RoleAssistant, "\n\nhello there\n\n", base.Add(2*time.Hour))); err != nil {
		t.Fatal(err)
	}
	st.Close()
	c = mustCall(t, cs, "read_session", map[string]any{"ref": s.ID, "turn": 1})
	if !strings.Contains(c.text, "]\nhello there\n") || strings.Contains(c.text, "]\n\n") {
		t.Errorf("a message starts with blank lines:\n%s", c.text)
	}
}
