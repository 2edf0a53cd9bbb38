package insights_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/insights"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/sqlite"
)

var day0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return day0.Add(d) }

func prompt(t time.Time, text string) *loom.Message {
	return &loom.Message{Role: loom.RoleUser, CreatedAt: t, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
}

func reply(t time.Time, model string, u loom.Usage, tools ...loom.Part) *loom.Message {
	parts := append([]loom.Part{{Type: loom.PartText, Text: "done"}}, tools...)
	return &loom.Message{Role: loom.RoleAssistant, CreatedAt: t, Provider: "anthropic", Model: model, Usage: u, Parts: parts}
}

func call(id, name, status string) loom.Part {
	return loom.Part{Type: loom.PartTool, CallID: id, Name: name, Status: status, Input: json.RawMessage(`{}`)}
}

func open(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func seed(t *testing.T, st loom.Store, s *loom.Session, msgs ...*loom.Message) *loom.Session {
	t.Helper()
	if s.UserID == "" {
		s.UserID = "alice"
	}
	if s.ID == "" {
		s.ID = loom.NewID()
	}
	if err := st.Append(context.Background(), s, msgs...); err != nil {
		t.Fatal(err)
	}
	return s
}

// The insights of a range: a day for each day of it, idle ones too; the
// sessions with a prompt each day; tool calls and failures by tool;
// tokens and cost by model, agent and project, summing to the totals;
// durations from the first prompt to the last reply; the longest and
// costliest sessions. Another user, the trash and days outside the
// range are not counted.
func TestBuild(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	api := loom.Project{ID: "0123456789abcdef", Name: "api", Root: "/src/api"}
	web := loom.Project{ID: "fedcba9876543210", Name: "web", Root: "/src/web"}
	opus := loom.Usage{InputTokens: 1000, OutputTokens: 100, APICalls: 1}
	long := seed(t, st, &loom.Session{Key: "cli:api", Title: "long work", Surface: "cli", Project: api},
		prompt(at(9*time.Hour), "start"),
		reply(at(9*time.Hour+time.Minute), "claude-opus-4-6", opus, call("c1", "Bash", loom.ToolCompleted), call("c2", "Bash", loom.ToolError)),
		prompt(at(33*time.Hour), "next day"),
		reply(at(35*time.Hour), "claude-opus-4-6", opus, call("c3", "Read", loom.ToolCompleted)))
	short := seed(t, st, &loom.Session{Key: "claude-code:x", Title: "quick fix", Surface: "claude-code", Project: web},
		prompt(at(10*time.Hour), "fix it"),
		reply(at(10*time.Hour+30*time.Second), "claude-haiku-4-5", loom.Usage{InputTokens: 500, OutputTokens: 50, APICalls: 1},
			call("c4", "Edit", loom.ToolCompleted)))
	// Unpriced, one day later; a session whose reply is outside the range.
	seed(t, st, &loom.Session{Key: "cli:local", Title: "local model", Surface: "cli", Project: api},
		prompt(at(34*time.Hour), "hello"), reply(at(34*time.Hour+time.Second), "no-such-model", loom.Usage{InputTokens: 7, OutputTokens: 3, APICalls: 1}))
	seed(t, st, &loom.Session{Key: "cli:old", Title: "before the range", Surface: "cli", Project: api},
		prompt(at(-48*time.Hour), "old"), reply(at(-47*time.Hour), "claude-opus-4-6", opus))
	seed(t, st, &loom.Session{UserID: "bob", Key: "cli:bob", Surface: "cli", Project: api},
		prompt(at(9*time.Hour), "bob's"), reply(at(10*time.Hour), "claude-opus-4-6", opus, call("b1", "Bash", loom.ToolError)))
	gone := seed(t, st, &loom.Session{Key: "cli:gone", Surface: "cli", Project: api},
		prompt(at(9*time.Hour), "gone"), reply(at(10*time.Hour), "claude-opus-4-6", opus, call("g1", "Bash", loom.ToolError)))
	if _, err := st.Delete(ctx, gone.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	var prices *pricing.Table // the bundled prices
	rep, err := insights.Build(ctx, st, insights.Options{UserID: "alice", Since: day0, Until: at(3 * 24 * time.Hour),
		Location: time.UTC, Prices: prices, Now: at(50 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Since != "2026-03-02" || rep.Until != "2026-03-04" || len(rep.Days) != 3 {
		t.Fatalf("range %s..%s, %d days", rep.Since, rep.Until, len(rep.Days))
	}
	d := rep.Days
	if d[0].Prompts != 2 || d[0].Sessions != 2 || d[0].Replies != 2 || d[1].Prompts != 2 || d[1].Sessions != 2 || d[1].Replies != 2 ||
		d[2].Prompts != 0 || d[2].Sessions != 0 || d[2].CostUSD != nil {
		t.Errorf("days %+v", d)
	}
	wantTokens := int64(1100 + 550 + 1100 + 10)
	if rep.Totals.Tokens != wantTokens || d[0].Tokens+d[1].Tokens != wantTokens {
		t.Errorf("tokens %d, days %d+%d, want %d", rep.Totals.Tokens, d[0].Tokens, d[1].Tokens, wantTokens)
	}
	if rep.Totals.Sessions != 3 || rep.Totals.Prompts != 4 || rep.Totals.Replies != 4 || rep.Totals.ActiveDays != 2 ||
		rep.Totals.ToolCalls != 4 || rep.Totals.ToolErrors != 1 {
		t.Errorf("totals %+v", rep.Totals)
	}
	if len(rep.Tools) != 3 || rep.Tools[0].Name != "Bash" || rep.Tools[0].Calls != 2 || rep.Tools[0].FailureRate != 0.5 {
		t.Errorf("tools %+v", rep.Tools)
	}
	if len(rep.Unpriced) != 1 || rep.Unpriced[0] != "no-such-model" {
		t.Errorf("unpriced %v", rep.Unpriced)
	}
	sum := func(list []insights.Share) (tokens int64, cost float64) {
		for _, s := range list {
			tokens += s.Tokens
			if s.CostUSD != nil {
				cost += *s.CostUSD
			}
		}
		return tokens, loom.RoundCost(cost)
	}
	for name, list := range map[string][]insights.Share{"models": rep.Models, "agents": rep.Agents, "projects": rep.Projects} {
		if tok, cost := sum(list); tok != wantTokens || rep.Totals.CostUSD == nil || cost != loom.RoundCost(*rep.Totals.CostUSD) {
			t.Errorf("%s sum to %d tokens $%v, the totals %d $%v", name, tok, cost, wantTokens, rep.Totals.CostUSD)
		}
	}
	if rep.Models[0].Name != "claude-opus-4-6" || rep.Agents[0].Key != "cli" || rep.Projects[0].Name != "api" || rep.Projects[1].Name != "web" {
		t.Errorf("first of each: %+v %+v %+v", rep.Models[0], rep.Agents[0], rep.Projects)
	}
	// long ran 26 hours (09:00 → 11:00 the next day), short 30 s, local 1 s.
	if rep.Durations.Sessions != 3 || rep.Durations.LongestSeconds != 26*3600 || rep.Durations.MedianSeconds != 30 {
		t.Errorf("durations %+v", rep.Durations)
	}
	if len(rep.Longest) != 3 || rep.Longest[0].ID != long.ID || rep.Longest[0].DurationSeconds != 26*3600 || rep.Longest[1].ID != short.ID ||
		rep.Longest[0].Title != "long work" || rep.Longest[0].Project != "api" || rep.Longest[0].Prompts != 2 || rep.Longest[0].Messages != 4 {
		t.Errorf("longest %+v", rep.Longest)
	}
	if len(rep.Costliest) != 3 || rep.Costliest[0].ID != long.ID || rep.Costliest[0].Tokens != 2200 || rep.Costliest[2].CostUSD != nil {
		t.Errorf("costliest %+v", rep.Costliest)
	}

	// One project, and the top two.
	rep, err = insights.Build(ctx, st, insights.Options{UserID: "alice", ProjectID: web.ID, Since: day0, Until: at(3 * 24 * time.Hour),
		Location: time.UTC, Prices: prices, Top: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Sessions != 1 || rep.Totals.Tokens != 550 || len(rep.Tools) != 1 || rep.Tools[0].Name != "Edit" || len(rep.Longest) != 1 {
		t.Errorf("web alone: %+v, tools %+v", rep.Totals, rep.Tools)
	}

	// Days are cut in the report's time zone: at UTC+14, 09:00 UTC on
	// the 2nd is 23:00 that day, 10:00 UTC is midnight of the 3rd, and
	// 10:00 UTC on the 3rd is the 4th.
	kiritimati, err := time.LoadLocation("Pacific/Kiritimati")
	if err != nil {
		t.Skip(err)
	}
	rep, err = insights.Build(ctx, st, insights.Options{UserID: "alice", Since: time.Date(2026, 3, 2, 0, 0, 0, 0, kiritimati),
		Until: time.Date(2026, 3, 5, 0, 0, 0, 0, kiritimati), Location: kiritimati, Prices: prices})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Days) != 3 || rep.Days[0].Prompts != 1 || rep.Days[1].Prompts != 2 || rep.Days[1].Sessions != 2 || rep.Days[2].Prompts != 1 {
		t.Errorf("at UTC+14: %+v", rep.Days)
	}

	if _, err := insights.Build(ctx, st, insights.Options{UserID: "alice", Since: day0, Until: day0}); loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("an empty range: %v", err)
	}
}

// Through the secrets gate, a title that holds a key and a tool's name
// come out redacted, as on every way out.
func TestBuildThroughTheGate(t *testing.T) {
	st := open(t)
	key := "ghp_" + strings.Repeat("R8tq2Wk3Lx9Vb7Nc5Mz1", 2)[:36]
	seed(t, st, &loom.Session{Key: "cli:x", Title: "use " + key, Surface: "cli"},
		prompt(at(time.Hour), "hi"), reply(at(2*time.Hour), "claude-opus-4-6", loom.Usage{InputTokens: 1, APICalls: 1}))
	g, err := insights.Of(secrets.Default().Gate(st))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := insights.Build(context.Background(), g, insights.Options{UserID: "alice", Since: day0, Until: at(24 * time.Hour), Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Longest) != 1 || strings.Contains(rep.Longest[0].Title, key) || !strings.Contains(rep.Longest[0].Title, "[REDACTED:") {
		t.Errorf("longest %+v", rep.Longest)
	}
}
