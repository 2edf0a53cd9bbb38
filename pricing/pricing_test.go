package pricing_test

import (
	"math"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/pricing"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		provider, model string
		want            float64 // input price; 0 means unknown
	}{
		{"openai", "gpt-4o", 2.50},
		{"openai", "gpt-4o-2024-08-06", 2.50},
		{"openai", "gpt-4o-2024-05-13", 5.00},
		{"openai", "gpt-4o-mini", 0.15},
		{"openai", "gpt-4o-mini-2024-07-18", 0.15},
		{"openai", "GPT-4.1", 2.00},
		{"openai", "gpt-4.1-mini-2025-04-14", 0.40},
		{"openai", "o3", 2.00},
		{"openai", "o3-2025-04-16", 2.00},
		{"openai", "o4-mini", 1.10},
		{"openai", "openai/gpt-4o", 2.50},
		{"anthropic", "claude-opus-4-20250514", 15.00},
		{"anthropic", "claude-opus-4-1-20250805", 15.00},
		{"anthropic", "claude-opus-4-5", 5.00},
		{"anthropic", "claude-sonnet-4-20250514", 3.00},
		{"anthropic", "claude-sonnet-4-0", 3.00},
		{"anthropic", "claude-sonnet-4-5-20250929", 3.00},
		{"anthropic", "claude-3-5-haiku-latest", 0.80},
		{"anthropic", "claude-3-5-haiku-20241022", 0.80},
		{"anthropic", "claude-haiku-4-5", 1.00},
		{"anthropic", "claude-haiku-4-5-20251001", 1.00},
		{"anthropic", "claude-opus-4-6", 5.00},
		{"anthropic", "claude-opus-4-5-20251101", 5.00},
		{"anthropic", "claude-sonnet-4-5", 3.00},
		{"anthropic", "claude-sonnet-4-6", 3.00},
		{"openai", "gpt-5", 1.25},
		{"openai", "gpt-5-2025-08-07", 1.25},
		{"openai", "gpt-5-codex", 1.25},
		{"openai", "gpt-5-mini", 0.25},
		{"openai", "gpt-5-mini-2025-08-07", 0.25},
		{"openai", "gpt-5-nano", 0.05},
		{"openai", "gpt-5.1", 1.25},
		{"openai", "gpt-5.1-codex", 1.25},
		{"openai", "gpt-5.1-codex-max", 1.25},
		{"openai", "gpt-5.1-codex-mini", 0.25},
		{"openai", "gpt-5.2", 1.75},
		{"openai", "gpt-5.2-2025-12-11", 1.75},
		{"openai", "gpt-5.2-codex", 1.75},
		{"google", "gemini-2.5-pro", 1.25},
		{"google", "gemini-2.5-flash", 0.30},
		{"google", "gemini-2.5-flash-lite", 0.10},
		{"google", "gemini-3-pro-preview", 2.00},
		{"google", "gemini-3.1-pro-preview", 2.00},
		{"google", "gemini-3-flash-preview", 0.50},
		{"google", "google/gemini-2.5-pro", 1.25},
		{"openai", "o3-mini", 1.10},
		{"openai", "gpt-4.1-nano", 0.10},
		{"anthropic", "claude-3-7-sonnet-20250219", 3.00},
		{"anthropic", "claude-3-5-sonnet-latest", 3.00},
		{"anthropic", "claude-3-haiku-20240307", 0.25},
		{"google", "gemini-2.0-flash", 0.10},

		// Models LiteLLM's list prices that the former hand-written
		// table did not (gpt-5.3-codex was Codex's default).
		{"openai", "gpt-5.3-codex", 1.75},
		{"openai", "o3-pro", 20},
		{"openai", "gpt-5-pro", 15},
		{"openai", "gpt-5.2-pro", 21},
		// Undated names of models the list names by date only.
		{"anthropic", "claude-3-7-sonnet", 3.00},
		{"anthropic", "claude-3-opus", 15.00},
		// A gateway's or a subscription's provider, which the list does
		// not know, is priced by the model's name.
		{"github-copilot", "gpt-5.3-codex", 1.75},
		{"opencode", "anthropic/claude-sonnet-4-5", 3.00},

		// Different models that share a prefix are not guessed.
		{"openai", "gpt-4.1-nano-x", 0},
		{"openai", "gpt-5.3-codex-ultra", 0},
		{"github-copilot", "gpt-5.3-codex-ultra", 0},
		{"anthropic", "claude-sonnet-4-7", 0},
		{"google", "gemini-2.5-flash-image", 0},
		{"google", "gemini-3-pro-image-preview", 0},
		// Nor are names a gateway gives a deployment.
		{"openai", "aide-gpt-5", 0},
		// A model is priced under its own provider only.
		{"anthropic", "gpt-4o", 0},
		{"openai", "claude-sonnet-4", 0},
		{"openai", "llama3.2", 0},
		{"openai", "", 0},
	}
	for _, tt := range tests {
		p, ok := pricing.Lookup(tt.provider, tt.model)
		if ok != (tt.want != 0) || p.Input != tt.want {
			t.Errorf("Lookup(%q, %q) = %v, %v; want input %v", tt.provider, tt.model, p, ok, tt.want)
		}
	}
}

func TestCost(t *testing.T) {
	u := loom.Usage{
		InputTokens:      1_000_000,
		OutputTokens:     2_000_000,
		ReasoningTokens:  500_000, // part of the output, not billed twice
		CacheReadTokens:  4_000_000,
		CacheWriteTokens: 1_000_000,
	}
	checkCosts(t, u, 1e-9, []costCase{
		// A 6M-token prompt is above 200,000: the long-context
		// rates, 6 + 2*22.50 + 4*0.60 + 7.50.
		{"anthropic", "claude-sonnet-4-20250514", 60.90},
		// 3 + 2*15 + 4*0.30 + 3.75: Sonnet 3.7 has no long-context tier.
		{"anthropic", "claude-3-7-sonnet", 37.95},
		// 2.50 + 2*15 + 4*0.25 + 2.50
		{"google", "gemini-2.5-pro", 36.00},
		// 2.50 + 2*10 + 4*1.25 + 2.50
		{"openai", "gpt-4o", 30.00},
		// 0.15 + 2*0.60 + 4*0.075 + 0.15
		{"openai", "gpt-4o-mini", 1.80},
		// 5 + 2*25 + 4*0.50 + 6.25
		{"anthropic", "claude-opus-4-6", 63.25},
		// 1.25 + 2*10 + 4*0.125 + 1.25
		{"openai", "gpt-5-codex", 23.00},
		// 0.50 + 2*3 + 4*0.05 + 0.50
		{"google", "gemini-3-flash-preview", 7.20},
	})

	if c, ok := pricing.Cost("openai", "my-local-model", u); ok || c != 0 {
		t.Errorf("unknown model: got %v, %v; want 0, false", c, ok)
	}
	if c, ok := pricing.Cost("anthropic", "claude-haiku-4-5", loom.Usage{InputTokens: 1000, OutputTokens: 100}); !ok || math.Abs(c-0.0015) > 1e-12 {
		t.Errorf("small usage: got %v, %v; want 0.0015", c, ok)
	}
}

// A cache write kept for an hour costs twice Anthropic's input price,
// one kept for five minutes 1.25 times; a model with one cache-write
// price bills both at it.
func TestCostCacheWriteOneHour(t *testing.T) {
	u := loom.Usage{InputTokens: 10_000, OutputTokens: 1_000, CacheReadTokens: 100_000, CacheWriteTokens: 50_000, CacheWrite1hTokens: 40_000}
	checkCosts(t, u, 1e-12, []costCase{
		// (10,000*3 + 1,000*15 + 100,000*0.30 + 10,000*3.75 + 40,000*6) / 1e6
		{"anthropic", "claude-sonnet-4-5", 0.3525},
		// (10,000*5 + 1,000*25 + 100,000*0.50 + 10,000*6.25 + 40,000*10) / 1e6
		{"anthropic", "claude-opus-4-6", 0.5875},
		// (10,000*1 + 1,000*5 + 100,000*0.10 + 10,000*1.25 + 40,000*2) / 1e6
		{"anthropic", "claude-haiku-4-5", 0.1175},
		// (10,000*1.25 + 1,000*10 + 100,000*0.125 + 50,000*1.25) / 1e6
		{"openai", "gpt-5", 0.0975},
	})
	// Above 200,000 prompt tokens, Sonnet's long-context 1-hour price:
	// (10,000*6 + 1,000*22.50 + 300,000*0.60 + 10,000*7.50 + 40,000*12) / 1e6
	long := u
	long.CacheReadTokens = 300_000
	if got, _ := pricing.Cost("anthropic", "claude-sonnet-4-5", long); math.Abs(got-0.8175) > 1e-12 {
		t.Errorf("long context: %v, want 0.8175", got)
	}
	// An added price without a 1-hour price bills those writes at its
	// cache-write price.
	tab := &pricing.Table{}
	tab.Add("anthropic", "claude-sonnet-4-5", pricing.Price{Input: 1, CacheWrite: 2})
	if got, _ := tab.Cost("anthropic", "claude-sonnet-4-5", u, false); math.Abs(got-0.11) > 1e-12 {
		t.Errorf("added price: %v, want 0.11", got)
	}
}

// costCase is a model's price of a usage.
type costCase struct {
	provider, model string
	want            float64
}

// checkCosts checks that each case's model prices u at its want, to
// within tol.
func checkCosts(t *testing.T, u loom.Usage, tol float64, cases []costCase) {
	t.Helper()
	for _, tt := range cases {
		got, ok := pricing.Cost(tt.provider, tt.model, u)
		if !ok || math.Abs(got-tt.want) > tol {
			t.Errorf("Cost(%q, %q) = %v, %v; want %v", tt.provider, tt.model, got, ok, tt.want)
		}
	}
}

func TestTable(t *testing.T) {
	short := loom.Usage{InputTokens: 100_000, OutputTokens: 10_000, CacheReadTokens: 50_000, CacheWriteTokens: 50_000}
	var tb pricing.Table
	// 0.3 + 0.15 + 0.015 + 0.1875
	if c, ok := tb.Cost("anthropic", "claude-sonnet-4-5", short, false); !ok || math.Abs(c-0.6525) > 1e-12 {
		t.Errorf("bundled, short: %v, %v; want 0.6525", c, ok)
	}
	// 0.6 + 0.225 + 0.03 + 0.375
	if c, ok := tb.Cost("anthropic", "claude-sonnet-4-5", short, true); !ok || math.Abs(c-1.23) > 1e-12 {
		t.Errorf("bundled, long: %v, %v; want 1.23", c, ok)
	}
	tb.Add("", "claude-sonnet-4-5", pricing.Price{Input: 1, Output: 1, CacheRead: 1, CacheWrite: 1})
	tb.Add("openai", "my-model", pricing.Price{Input: 10})
	if c, ok := tb.Cost("anthropic", "claude-sonnet-4-5-20250929", short, true); !ok || math.Abs(c-0.21) > 1e-12 {
		t.Errorf("added price wins, without a long tier of its own: %v, %v; want 0.21", c, ok)
	}
	if c, ok := tb.Cost("openai", "my-model", short, false); !ok || math.Abs(c-1) > 1e-12 {
		t.Errorf("added model: %v, %v; want 1", c, ok)
	}
	if _, ok := tb.Lookup("anthropic", "my-model"); ok {
		t.Error("a price added for openai priced anthropic's model of that name")
	}
	if p, _ := pricing.Lookup("anthropic", "claude-sonnet-4-5"); p.Input != 3 {
		t.Errorf("a table's added price leaked into the bundled one: %v", p)
	}
}
