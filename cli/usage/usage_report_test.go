package usage_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/report"
)

// claudeLines is a Claude Code session in its own format: reply msg_A
// written over three lines (thinking, text, tool call) whose output
// count grows to its final 480 on the last, then msg_B late on May
// 18th and msg_C after midnight, all claude-sonnet-4-5.
const claudeLines = `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/projects/ledger","sessionId":"7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14","version":"2.1.62","gitBranch":"main","type":"user","message":{"role":"user","content":"Rename readConfig to LoadConfig"},"uuid":"u1","timestamp":"2026-05-18T14:02:11.198Z"}
{"parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/home/dev/projects/ledger","sessionId":"7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14","version":"2.1.62","gitBranch":"main","type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_A","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"Find the callers first.","signature":"x"}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":2000,"cache_read_input_tokens":20000,"output_tokens":8,"service_tier":"standard"}},"requestId":"req_A","uuid":"a1","timestamp":"2026-05-18T14:02:14.530Z"}
{"parentUuid":"a1","isSidechain":false,"userType":"external","cwd":"/home/dev/projects/ledger","sessionId":"7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14","version":"2.1.62","gitBranch":"main","type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_A","type":"message","role":"assistant","content":[{"type":"text","text":"Searching for readConfig."}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":2000,"cache_read_input_tokens":20000,"output_tokens":8,"service_tier":"standard"}},"requestId":"req_A","uuid":"a2","timestamp":"2026-05-18T14:02:15.000Z"}
{"parentUuid":"a2","isSidechain":false,"userType":"external","cwd":"/home/dev/projects/ledger","sessionId":"7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14","version":"2.1.62","gitBranch":"main","type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_A","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Grep","input":{"pattern":"readConfig"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":2000,"cache_read_input_tokens":20000,"output_tokens":480,"service_tier":"standard"}},"requestId":"req_A","uuid":"a3","timestamp":"2026-05-18T14:02:16.000Z"}
{"parentUuid":"a3","isSidechain":false,"userType":"external","cwd":"/home/dev/projects/ledger","sessionId":"7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14","version":"2.1.62","gitBranch":"main","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"config.go\nmain.go"}]},"uuid":"u2","timestamp":"2026-05-18T14:02:17.000Z"}
{"parentUuid":"u2","isSidechain":false,"userType":"external","cwd":"/home/dev/projects/ledger","sessionId":"7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14","version":"2.1.62","gitBranch":"main","type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_B","type":"message","role":"assistant","content":[{"type":"text","text":"Two files call it."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"cache_creation_input_tokens":100,"cache_read_input_tokens":22480,"output_tokens":120,"service_tier":"standard"}},"requestId":"req_B","uuid":"b1","timestamp":"2026-05-18T23:50:00.000Z"}
{"parentUuid":"b1","isSidechain":false,"userType":"external","cwd":"/home/dev/projects/ledger","sessionId":"7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14","version":"2.1.62","gitBranch":"main","type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_C","type":"message","role":"assistant","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":2,"cache_creation_input_tokens":0,"cache_read_input_tokens":22600,"output_tokens":40,"service_tier":"standard"}},"requestId":"req_C","uuid":"c1","timestamp":"2026-05-19T00:10:00.000Z"}
`

// Reports over real-format files of all four agents, against figures
// worked out by hand from their lines and the list prices per million
// tokens (Sonnet 4.5: 3 input, 15 output, 0.30 cache read, 3.75 cache
// write; Gemini 3 Flash: 0.50, 3, 0.05; Gemini 3.1 Pro: 2, 12, 0.20).
func TestUsageReportsOfImportedAgents(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	dir := t.TempDir()
	write := func(rel, data string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	claude := write("claude/projects/-home-dev-projects-ledger/7c2e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14.jsonl", claudeLines)
	codex := write("codex/rollout-2026-07-20T09-14-03-019f7ecd-c978-7a41-9c3e-5b1f0d2e8a47.jsonl",
		read("../../importer/codex/testdata/rollout-2026-07-20T09-14-03-019f7ecd-c978-7a41-9c3e-5b1f0d2e8a47.jsonl"))
	gemini := write("gemini/resume.jsonl", read("../../importer/gemini/testdata/resume.jsonl"))
	opencode, err := filepath.Abs("../../importer/opencode/testdata/data")
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range [][2]string{{"claude-code", claude}, {"codex", codex}, {"gemini", gemini}, {"opencode", opencode}} {
		if r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "import", "--from", src[0], src[1]); r.Code != 0 {
			t.Fatalf("import %s: exit %d: %s", src[0], r.Code, r.Stderr)
		}
	}
	cost := func(tot report.Totals) float64 {
		if tot.CostUSD == nil {
			return math.NaN()
		}
		return *tot.CostUSD
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	rows := func(rep report.Report) map[string]report.Row {
		m := map[string]report.Row{}
		for _, r := range rep.Rows {
			m[r.Period] = r
		}
		return m
	}

	daily := rows(clitest.DecodeJSON[report.Report](t, fx.MustRun(t, "usage", "daily", "--tz", "UTC", "--breakdown", "agent", "--json")))
	type want struct {
		in, out, cacheRead, cacheWrite, total int64
		cost                                  float64 // NaN: unknown
	}
	for period, w := range map[string]want{
		// msg_A counts its last line: 3 in, 480 out, 20,000 cache read,
		// 2,000 cache write = 9 + 7,200 + 6,000 + 7,500 = $0.020709;
		// msg_B: 15 + 1,800 + 6,744 + 375 = $0.008934.
		"2026-05-18": {8, 600, 42480, 2100, 45188, 0.029643},
		// msg_C: 6 + 600 + 6,780 = $0.007386.
		"2026-05-19": {2, 40, 22600, 0, 22642, 0.007386},
		// Gemini 3 Flash: 8,714 in and 41 + 188 thought tokens out =
		// 4,357 + 687; then 9,012 in of which 8,120 cached, 66 out =
		// 446 + 406 + 198: $0.006094.
		"2026-06-02": {9606, 295, 8120, 0, 18021, 0.006094},
		// Gemini 3.1 Pro: 10,250 in of which 8,904 cached, 58 + 120 out:
		// 2,692 + 1,780.8 + 2,136 = $0.0066088.
		"2026-06-03": {1346, 178, 8904, 0, 10428, 0.0066088},
		// Codex gpt-5.5, five token counts (inputs less their cached
		// part), at LiteLLM's price (5 in, 30 out, 0.5 cached):
		// 63,880 + 27,540 + 31,552 = $0.122972.
		"2026-07-20": {12776, 918, 63104, 0, 76798, 0.122972},
		// opencode: Sonnet 4.5, 3,000 in and 40 out with 12 of
		// reasoning, which opencode counts apart and loom's output
		// includes: 52 out, $0.009 + 52 × $15/M = $0.00978.
		"2025-10-28": {3000, 52, 0, 0, 3052, 0.00978},
	} {
		r, ok := daily[period]
		if !ok {
			t.Errorf("no row for %s", period)
			continue
		}
		got := want{r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheWriteTokens, r.TotalTokens, cost(r.Totals)}
		if got.in != w.in || got.out != w.out || got.cacheRead != w.cacheRead || got.cacheWrite != w.cacheWrite || got.total != w.total ||
			(math.IsNaN(w.cost) != math.IsNaN(got.cost)) || (!math.IsNaN(w.cost) && !near(got.cost, w.cost)) {
			t.Errorf("%s: got %+v, want %+v", period, got, w)
		}
	}
	if r := daily["2026-07-20"]; len(r.Breakdown) != 1 || r.Breakdown[0].Key != "codex" || r.Breakdown[0].CostUSD == nil {
		t.Errorf("codex's day by agent: %+v", r.Breakdown)
	}

	monthly := clitest.DecodeJSON[report.Report](t, fx.MustRun(t, "usage", "monthly", "--tz", "UTC", "--since", "2026-01-01", "--json"))
	m := rows(monthly)
	if len(monthly.Rows) != 3 || !near(cost(m["2026-05"].Totals), 0.037029) || m["2026-05"].TotalTokens != 67830 ||
		!near(cost(m["2026-06"].Totals), 0.0127028) || !near(cost(m["2026-07"].Totals), 0.122972) {
		t.Errorf("monthly since 2026: %+v", monthly.Rows)
	}
	if !near(cost(monthly.Total), 0.037029+0.0127028+0.122972) || len(monthly.Total.Unpriced) != 0 {
		t.Errorf("monthly total: %+v", monthly.Total)
	}

	blocks := clitest.DecodeJSON[report.Report](t, fx.MustRun(t, "usage", "blocks", "--tz", "UTC", "--agent", "claude-code", "--json"))
	// msg_A opens 14:00–19:00; msg_B, after it ended, opens 23:00–04:00
	// and msg_C falls in it.
	if len(blocks.Rows) != 2 || blocks.Rows[0].Period != "2026-05-18 14:00" || !near(cost(blocks.Rows[0].Totals), 0.020709) ||
		blocks.Rows[1].Period != "2026-05-18 23:00" || blocks.Rows[1].TotalTokens != 22705+22642 || !near(cost(blocks.Rows[1].Totals), 0.01632) {
		t.Errorf("blocks: %+v", blocks.Rows)
	}

	// The same on a terminal: a table with the day's cost.
	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "usage", "--by", "day", "--tz", "UTC", "--since", "2026-07-01")
	plain := ansi.Strip(r.Stdout)
	for _, w := range []string{"PERIOD", "2026-07-20", "gpt-5.5", "Total", "$0.12"} {
		if !strings.Contains(plain, w) {
			t.Errorf("terminal report lacks %q:\n%s", w, plain)
		}
	}
	if strings.Contains(plain, "unpriced") {
		t.Errorf("a priced model reported unpriced:\n%s", plain)
	}
	// Piped: the kind of each line first, tab-separated; CSV has a header.
	if out := fx.MustRun(t, "usage", "weekly", "--tz", "UTC", "--since", "2026-05-01", "--until", "2026-05-31"); !strings.HasPrefix(out, "period\t2026-W21\t") {
		t.Errorf("piped weekly:\n%s", out)
	}
	if out := fx.MustRun(t, "usage", "daily", "--csv", "--tz", "UTC", "--since", "2026-05-19", "--until", "2026-05-19"); !strings.HasPrefix(out, "KIND,PERIOD,START,END,MODELS,") ||
		!strings.Contains(out, "period,2026-05-19,") || !strings.Contains(out, ",22642,0.007386\n") {
		t.Errorf("csv:\n%s", out)
	}
	if r := fx.RunWith(t, clitest.RunOpts{}, "usage", "--by", "year"); r.Code != 2 {
		t.Errorf("--by year: exit %d", r.Code)
	}
}

// The MCP tool usage returns the report as structured content and as
// text, over the project loom mcp was started in or every project.
func TestMCPUsage(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	cs := clitest.ConnectStdio(t, fx)
	all := clitest.MustCall(t, cs, "usage", map[string]any{"by": "month", "tz": "UTC", "all_projects": true, "breakdown": "model"})
	rows, _ := all.Data["rows"].([]any)
	total, _ := all.Data["total"].(map[string]any)
	if len(rows) == 0 || total["input_tokens"] != float64(1300) || !strings.Contains(all.Text, "PERIOD") || !strings.Contains(all.Text, "└ gpt-x") {
		t.Fatalf("usage by month, every project: %v\n%s", all.Data, all.Text)
	}
	here := clitest.MustCall(t, cs, "usage", map[string]any{"by": "block"})
	if !strings.HasPrefix(here.Text, "Project api") || here.Data["by"] != "block" {
		t.Fatalf("usage by block here:\n%s", here.Text)
	}
	clitest.WantToolError(t, cs, "usage", map[string]any{"by": "year"}, "day, week, month, block or session")
	clitest.WantToolError(t, cs, "usage", map[string]any{"tz": "Mars/Olympus"}, "not a time zone")
}
