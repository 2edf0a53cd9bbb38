package human

import (
	"testing"
	"time"

	"github.com/loomhq/loom"
)

func TestHuman(t *testing.T) {
	tests := []struct{ got, want string }{
		{Plural(1, "turn"), "1 turn"},
		{Plural(0, "turn"), "0 turns"},
		{Count(1234567), "1,234,567"},
		{Count(-1234), "-1,234"},
		{Count(999), "999"},
		{Cost(0), "$0"},
		{Cost(0.0000001), "<$0.000001"},
		{Cost(0.000037), "$0.000037"},
		{Cost(0.0125), "$0.01"},
		{Cost(0.1 + 0.2), "$0.30"},
		{Duration(120 * time.Millisecond), "120ms"},
		{Duration(2500 * time.Millisecond), "2.5s"},
		{Duration(90*time.Second + 400*time.Millisecond), "1m30s"},
		{Usage(loom.Usage{InputTokens: 1200, OutputTokens: 300, ReasoningTokens: 50, CacheReadTokens: 800, CostUSD: 0.0125, APICalls: 2}),
			"1,200 in · 300 out · 50 reasoning · 800 cache read, 0 cache write · $0.01 · 2 calls"},
		// Tokens without a price are an unknown cost, never a free one.
		{Usage(loom.Usage{InputTokens: 54, OutputTokens: 212, CacheReadTokens: 88231, APICalls: 4}),
			"54 in · 212 out · 88,231 cache read, 0 cache write · — · 4 calls"},
		{UsageCost(loom.Usage{CacheWriteTokens: 10}), "—"},
		{UsageCost(loom.Usage{OutputTokens: 10, CostUSD: 0.0004}), "$0.0004"},
		{UsageCost(loom.Usage{}), "$0"},
		{UsageCost(loom.Usage{APICalls: 1, Compactions: 1}), "$0"},
		{OneLine("a\n\tb  c"), "a b c"},
		{OneLine("a  b"), "a  b"},
	}
	for i, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("case %d: got %q, want %q", i, tc.got, tc.want)
		}
	}
}
