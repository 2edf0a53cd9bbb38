package conformance

import (
	"testing"

	"github.com/loomhq/loom"
)

// Usage rolls up per session, project, surface and model.
func testUsage(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	m1 := text(loom.RoleAssistant, "a")
	m1.Model, m1.Provider, m1.Usage = "gpt-x", "openai", loom.Usage{InputTokens: 100, OutputTokens: 10, CostUSD: 1, APICalls: 1}
	m2 := text(loom.RoleAssistant, "b")
	m2.Model, m2.Provider, m2.Usage = "claude-y", "anthropic", loom.Usage{InputTokens: 50, OutputTokens: 5, CacheReadTokens: 20, CostUSD: 2, APICalls: 1}
	mustAppend(t, st, s, text(loom.RoleUser, "q"), m1, m2)
	o := newSession("alice", "telegram:1")
	o.Project = loom.Project{}
	m3 := text(loom.RoleAssistant, "c")
	m3.Model, m3.Provider, m3.Usage = "gpt-x", "openai", loom.Usage{InputTokens: 1, CostUSD: 0.5, APICalls: 1}
	mustAppend(t, st, o, m3)
	rep, err := st.Usage(ctx(t), loom.UsageFilter{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	want := loom.Usage{InputTokens: 151, OutputTokens: 15, CacheReadTokens: 20, CostUSD: 3.5, APICalls: 3}
	if rep.Total != want {
		t.Fatalf("total = %+v, want %+v", rep.Total, want)
	}
	if len(rep.BySession) != 2 || rep.BySession[0].Key != s.ID || rep.BySession[0].Usage.CostUSD != 3 {
		t.Fatalf("by session = %+v", rep.BySession)
	}
	if len(rep.ByProject) != 2 {
		t.Fatalf("by project = %+v", rep.ByProject)
	}
	if len(rep.BySurface) != 2 || rep.BySurface[0].Key != "cli" || rep.BySurface[0].Usage.CostUSD != 3 ||
		rep.BySurface[1].Key != "telegram" || rep.BySurface[1].Sessions != 1 {
		t.Fatalf("by surface = %+v", rep.BySurface)
	}
	if len(rep.ByModel) != 2 || rep.ByModel[0].Name != "claude-y" || rep.ByModel[1].Usage.InputTokens != 101 || rep.ByModel[1].Sessions != 2 {
		t.Fatalf("by model = %+v", rep.ByModel)
	}
	// A fork's inherited history is not counted again.
	f, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Usage.IsZero() {
		t.Fatalf("fork starts with usage %+v", f.Usage)
	}
	again, _ := st.Usage(ctx(t), loom.UsageFilter{UserID: "alice"})
	if again.Total != want || len(again.ByModel) != 2 || again.ByModel[1].Usage.InputTokens != 101 {
		t.Fatalf("after a fork: total %+v, by model %+v", again.Total, again.ByModel)
	}
	one, _ := st.Usage(ctx(t), loom.UsageFilter{UserID: "alice", SessionID: o.ID})
	if one.Total.CostUSD != 0.5 {
		t.Fatalf("one session usage = %+v", one.Total)
	}
	if none, _ := st.Usage(ctx(t), loom.UsageFilter{UserID: "bob"}); !none.Total.IsZero() {
		t.Fatalf("bob's usage = %+v", none.Total)
	}
}
