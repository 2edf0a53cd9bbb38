package usage_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/report"
)

// loom usage prices lists the table reports price with: config.toml's
// prices first, the bundled ones after, a bundled price that config
// hides marked so, the table's date said.
func TestUsagePrices(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	conf := filepath.Join(fx.Home, "config", "config.toml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("[prices.\"anthropic/claude-sonnet-4-5\"]\ninput = 2.5\noutput = 12.0\n\n[prices.\"qwen3-coder\"]\ninput = 0.5\noutput = 1.5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := clitest.DecodeJSON[struct {
		AsOf   string          `json:"as_of"`
		Source string          `json:"source"`
		Prices []pricing.Entry `json:"prices"`
	}](t, fx.MustRun(t, "usage", "prices", "--json"))
	if got.AsOf != pricing.Bundled.AsOf() || len(got.Prices) < 30 {
		t.Fatalf("as of %q, %d prices", got.AsOf, len(got.Prices))
	}
	first := map[string]pricing.Entry{}
	for _, e := range got.Prices {
		k := e.Source + " " + e.Provider + "/" + e.Model
		if _, ok := first[k]; !ok {
			first[k] = e
		}
	}
	if e := first["config anthropic/claude-sonnet-4-5"]; e.Input != 2.5 || e.Output != 12 {
		t.Fatalf("config price %+v", e)
	}
	if e := first["config /qwen3-coder"]; e.Input != 0.5 {
		t.Fatalf("config price for any provider %+v", e)
	}
	if e := first["bundled anthropic/claude-sonnet-4-5"]; !e.Overridden || e.Input != 3 || e.LongContext == nil {
		t.Fatalf("bundled price hidden by config %+v", e)
	}
	for _, m := range []string{"anthropic/claude-opus-4-6", "openai/gpt-5.1-codex", "google/gemini-2.5-pro"} {
		if e, ok := first["bundled "+m]; !ok || e.Overridden {
			t.Fatalf("%s: %+v", m, e)
		}
	}
	r := fx.RunWith(t, clitest.RunOpts{Tty: true, Width: 120}, "usage", "prices")
	if r.Code != 0 || !strings.Contains(r.Stdout, "as of "+pricing.Bundled.AsOf()) || !strings.Contains(r.Stdout, "bundled, overridden") ||
		!strings.Contains(r.Stdout, "qwen3-coder") {
		t.Fatalf("exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// oneHourLines are a Claude Code session of two replies that wrote to
// the 1-hour cache: the first 1,000 of its 5,000 cache-write tokens for
// five minutes and 4,000 for an hour, the second all 20,000 for an hour.
const oneHourLines = `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/projects/ledger","sessionId":"5b1f3c2e-8d4a-4f6b-9c7e-2a1d0e9f8b7c","version":"2.1.62","type":"user","message":{"role":"user","content":"Explain the ledger"},"uuid":"u1","timestamp":"2025-05-01T10:00:00.000Z"}
{"parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/home/dev/projects/ledger","sessionId":"5b1f3c2e-8d4a-4f6b-9c7e-2a1d0e9f8b7c","version":"2.1.62","type":"assistant","message":{"model":"claude-sonnet-4-5-20250929","id":"msg_A","type":"message","role":"assistant","content":[{"type":"text","text":"It keeps entries."}],"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_creation_input_tokens":5000,"cache_read_input_tokens":10000,"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":4000},"output_tokens":200,"service_tier":"standard"}},"requestId":"req_A","uuid":"a1","timestamp":"2025-05-01T10:00:05.000Z"}
{"parentUuid":"a1","isSidechain":false,"userType":"external","cwd":"/home/dev/projects/ledger","sessionId":"5b1f3c2e-8d4a-4f6b-9c7e-2a1d0e9f8b7c","version":"2.1.62","type":"user","message":{"role":"user","content":"And the balances?"},"uuid":"u2","timestamp":"2025-05-01T10:01:00.000Z"}
{"parentUuid":"u2","isSidechain":false,"userType":"external","cwd":"/home/dev/projects/ledger","sessionId":"5b1f3c2e-8d4a-4f6b-9c7e-2a1d0e9f8b7c","version":"2.1.62","type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_B","type":"message","role":"assistant","content":[{"type":"text","text":"Summed per account."}],"stop_reason":"end_turn","usage":{"input_tokens":20,"cache_creation_input_tokens":20000,"cache_read_input_tokens":50000,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":20000},"output_tokens":1000,"service_tier":"standard"}},"requestId":"req_B","uuid":"b1","timestamp":"2025-05-01T10:01:09.000Z"}
`

// Cache writes kept for an hour are priced at the 1-hour rate (twice
// the input price), the rest at the 5-minute one, to the cent of a
// count by hand; loom usage and usage daily price from the same table,
// so they agree, and agree again after config.toml changes a price.
func TestUsageCacheWriteOneHour(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	p := filepath.Join(t.TempDir(), "5b1f3c2e-8d4a-4f6b-9c7e-2a1d0e9f8b7c.jsonl")
	if err := os.WriteFile(p, []byte(oneHourLines), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "import", "--from", "claude-code", p); r.Code != 0 {
		t.Fatalf("import: exit %d: %s", r.Code, r.Stderr)
	}
	costs := func() (total, session, daily float64) {
		t.Helper()
		u := clitest.DecodeJSON[loom.UsageReport](t, fx.MustRun(t, "usage", "--json", "--no-import"))
		if u.Total.CacheWriteTokens != 25_000 || u.Total.CacheWrite1hTokens != 24_000 || len(u.BySession) != 1 {
			t.Fatalf("usage %+v", u)
		}
		d := clitest.DecodeJSON[report.Report](t, fx.MustRun(t, "usage", "daily", "--tz", "UTC", "--json", "--no-import"))
		return u.Total.CostUSD, u.BySession[0].Usage.CostUSD, d.Total.Cost()
	}
	// Sonnet 4.5: 10×3 + 200×15 + 10,000×0.30 + 1,000×3.75 + 4,000×6
	// = 33,780 millionths; Opus 4.6: 20×5 + 1,000×25 + 50,000×0.50 +
	// 20,000×10 = 250,100 millionths. At the 5-minute rate alone it
	// would be $0.19988.
	const want = 0.28388
	total, session, daily := costs()
	for _, c := range []float64{total, session, daily} {
		if math.Abs(c-want) > 1e-9 {
			t.Fatalf("usage %v, its session %v, daily %v; want %v", total, session, daily, want)
		}
	}
	if r := fx.RunWith(t, clitest.RunOpts{Tty: true, Width: 80}, "usage", "daily", "--tz", "UTC", "--no-import"); !strings.Contains(r.Stdout, "$0.28") {
		t.Fatalf("daily table:\n%s%s", r.Stdout, r.Stderr)
	}

	// Opus at a price of config.toml's: 20×1 + 1,000×2 + 50,000×0.10 +
	// 20,000×3 = 67,020 millionths.
	conf := filepath.Join(fx.Home, "config", "config.toml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("[prices.\"anthropic/claude-opus-4-6\"]\ninput = 1\noutput = 2\ncache_read = 0.1\ncache_write = 1.5\ncache_write_1h = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const after = 0.1008
	total, session, daily = costs()
	for _, c := range []float64{total, session, daily} {
		if math.Abs(c-after) > 1e-9 {
			t.Fatalf("after the override: usage %v, its session %v, daily %v; want %v", total, session, daily, after)
		}
	}
	if r := fx.RunWith(t, clitest.RunOpts{Tty: true, Width: 80}, "usage", "--no-import"); !strings.Contains(r.Stdout, "$0.10") || strings.Contains(r.Stdout, "$0.28") {
		t.Fatalf("usage table after the override:\n%s%s", r.Stdout, r.Stderr)
	}
}
