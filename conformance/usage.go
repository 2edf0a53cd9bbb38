package conformance

import (
	"reflect"
	"slices"
	"testing"
	"time"

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
	// SessionsOnly gives the same sessions and total, and nothing else.
	only, err := st.Usage(ctx(t), loom.UsageFilter{UserID: "alice", SessionsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if only.Total != want || !reflect.DeepEqual(only.BySession, rep.BySession) || only.ByProject != nil || only.BySurface != nil || only.ByModel != nil {
		t.Fatalf("sessions only = %+v, want the sessions and total of %+v", only, rep)
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

// UsageSlices sums usage per quarter hour, surface, project and model,
// each message once, live sessions only.
func testUsageSlices(t *testing.T, open Opener) {
	st := open(t)
	at := func(hm string) time.Time {
		tm, err := time.Parse("2006-01-02T15:04:05.000Z", "2026-03-01T"+hm+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	msg := func(when, provider, model string, u loom.Usage) *loom.Message {
		m := text(loom.RoleAssistant, model)
		m.Provider, m.Model, m.Usage, m.CreatedAt = provider, model, u, at(when)
		return m
	}
	s := newSession("alice", "cli:api")
	q := text(loom.RoleUser, "q")
	q.CreatedAt = at("10:06:00.000")
	mustAppend(t, st, s, q,
		msg("10:07:00.000", "openai", "gpt-x", loom.Usage{InputTokens: 100, OutputTokens: 10, CostUSD: 1, APICalls: 1}),
		msg("10:14:59.999", "openai", "gpt-x", loom.Usage{InputTokens: 50, CacheReadTokens: 5, APICalls: 1}),
		msg("10:15:00.000", "anthropic", "claude-y", loom.Usage{InputTokens: 10, CacheReadTokens: 150_000, CacheWriteTokens: 60_000, OutputTokens: 7}))
	o := newSession("alice", "telegram:1")
	o.Project = loom.Project{}
	mustAppend(t, st, o, msg("23:59:00.000", "openai", "gpt-x", loom.Usage{InputTokens: 1}))
	b := newSession("bob", "cli:api")
	mustAppend(t, st, b, msg("10:07:00.000", "openai", "gpt-x", loom.Usage{InputTokens: 1000}))
	d := newSession("alice", "cli:gone")
	mustAppend(t, st, d, msg("10:07:00.000", "openai", "gpt-x", loom.Usage{InputTokens: 1000}))
	if _, err := st.Delete(ctx(t), d.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A fork's inherited history is not counted again.
	if _, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := st.UsageSlices(ctx(t), loom.UsageSliceFilter{UserID: "alice", LongContext: 200_000})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		start, first, last      string
		surface, project, model string
		long                    bool
		messages                int64
		u                       loom.Usage
	}
	rows := func(slices []loom.UsageSlice) []row {
		out := make([]row, len(slices))
		for i, x := range slices {
			out[i] = row{loom.FormatTime(x.Start), loom.FormatTime(x.First), loom.FormatTime(x.Last), x.Surface, x.ProjectName,
				x.Provider + ":" + x.Model, x.LongContext, x.Messages, x.Usage}
		}
		return out
	}
	want := []row{
		{"2026-03-01T10:00:00.000Z", "2026-03-01T10:07:00.000Z", "2026-03-01T10:14:59.999Z", "cli", "api", "openai:gpt-x", false, 2,
			loom.Usage{InputTokens: 150, OutputTokens: 10, CacheReadTokens: 5, CostUSD: 1, APICalls: 2}},
		{"2026-03-01T10:15:00.000Z", "2026-03-01T10:15:00.000Z", "2026-03-01T10:15:00.000Z", "cli", "api", "anthropic:claude-y", true, 1,
			loom.Usage{InputTokens: 10, CacheReadTokens: 150_000, CacheWriteTokens: 60_000, OutputTokens: 7}},
		{"2026-03-01T23:45:00.000Z", "2026-03-01T23:59:00.000Z", "2026-03-01T23:59:00.000Z", "telegram", "", "openai:gpt-x", false, 1,
			loom.Usage{InputTokens: 1}},
	}
	if g := rows(got); !slices.Equal(g, want) {
		t.Fatalf("slices:\n got %+v\nwant %+v", g, want)
	}
	got, _ = st.UsageSlices(ctx(t), loom.UsageSliceFilter{UserID: "alice", Since: at("10:15:00.000"), Until: at("23:59:00.000")})
	if len(got) != 1 || got[0].Model != "claude-y" || got[0].LongContext {
		t.Fatalf("since 10:15 until 23:59 without a long-context threshold: %+v", got)
	}
	got, _ = st.UsageSlices(ctx(t), loom.UsageSliceFilter{UserID: "alice", Surface: "telegram"})
	if len(got) != 1 || got[0].Usage.InputTokens != 1 {
		t.Fatalf("surface telegram: %+v", got)
	}
	got, _ = st.UsageSlices(ctx(t), loom.UsageSliceFilter{UserID: "alice", ProjectID: s.Project.ID})
	if len(got) != 2 {
		t.Fatalf("project api: %+v", got)
	}
	if got, _ = st.UsageSlices(ctx(t), loom.UsageSliceFilter{UserID: "carol"}); len(got) != 0 {
		t.Fatalf("carol: %+v", got)
	}
}
