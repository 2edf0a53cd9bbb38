package conformance

import (
	"testing"

	"github.com/loomhq/loom"
)

// An agent's instructions (a system prompt, an instructions file it was
// given, its environment) are kept as system messages, but they are not
// the conversation (SPEC §10, "Recall"): a search finds them only when
// asked for by their role, in every tier and within one session too.
func testSearchInstructions(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:instructions")
	mustAppend(t, st, s,
		text(loom.RoleSystem, "You are a coding agent. Follow the zanzibar conventions of AGENTS.md and answer tersely."),
		text(loom.RoleUser, "Rename the parser module."),
		text(loom.RoleAssistant, "Renamed it to lexer, as asked."),
	)
	for _, q := range []loom.SearchQuery{
		{Text: "zanzibar conventions"},
		{Text: "zanzibar conventions", Exact: true},
		{Text: "zanzibar parser", AnyWord: true},
		{Text: "zanzibar", SessionID: s.ID},
	} {
		for _, h := range searchAs(t, st, q) {
			if h.Role == loom.RoleSystem {
				t.Errorf("search %q (any word %v, exact %v, in a session %v) found the agent's instructions (message %d) without asking for them", q.Text, q.AnyWord, q.Exact, q.SessionID != "", h.Seq)
			}
		}
	}
	if hits := searchAs(t, st, loom.SearchQuery{Text: "parser"}); len(hits) != 1 || hits[0].Role != loom.RoleUser {
		t.Errorf("search parser = %+v, want the prompt", hits)
	}
	for _, q := range []loom.SearchQuery{
		{Text: "zanzibar conventions", Role: loom.RoleSystem},
		{Text: "zanzibar", Role: loom.RoleSystem, SessionID: s.ID},
	} {
		if hits := searchAs(t, st, q); len(hits) != 1 || hits[0].Seq != 1 {
			t.Errorf("search %q as system = %+v, want the instructions, message 1", q.Text, hits)
		}
	}
}
