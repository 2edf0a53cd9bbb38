// Package pricing turns token usage into US dollars for well-known models.
//
// The figures are the providers' published list prices per million tokens
// as of 2026-11 (standard tier, prompts under any long-context surcharge
// threshold). Anything not in the table is unknown: Cost reports false and
// callers leave the cost at zero rather than guess.
//
// Usage is counted the way loom's providers report it: InputTokens are the
// prompt tokens that were neither read from nor written to a cache, so
// input, cache-read and cache-write tokens never overlap and each is billed
// once at its own rate. OutputTokens include reasoning tokens, which are
// billed as output and not counted again.
package pricing

import (
	"regexp"
	"strings"

	"github.com/loomhq/loom"
)

// AsOf is the month the prices in the table were taken from the providers'
// published list prices.
const AsOf = "2026-11"

// Price is what one million tokens of each kind cost, in US dollars.
type Price struct {
	Input      float64
	Output     float64
	CacheRead  float64
	CacheWrite float64
}

type entry struct {
	provider string
	model    string
	price    Price
}

// table lists models by their base name. OpenAI bills cache writes as
// ordinary input; Anthropic's cache writes are the 5-minute kind.
var table = []entry{
	{"openai", "gpt-4o", Price{Input: 2.50, Output: 10.00, CacheRead: 1.25, CacheWrite: 2.50}},
	{"openai", "gpt-4o-2024-05-13", Price{Input: 5.00, Output: 15.00, CacheRead: 5.00, CacheWrite: 5.00}},
	{"openai", "gpt-4o-mini", Price{Input: 0.15, Output: 0.60, CacheRead: 0.075, CacheWrite: 0.15}},
	{"openai", "gpt-4.1", Price{Input: 2.00, Output: 8.00, CacheRead: 0.50, CacheWrite: 2.00}},
	{"openai", "gpt-4.1-mini", Price{Input: 0.40, Output: 1.60, CacheRead: 0.10, CacheWrite: 0.40}},
	{"openai", "o3", Price{Input: 2.00, Output: 8.00, CacheRead: 0.50, CacheWrite: 2.00}},
	{"openai", "o4-mini", Price{Input: 1.10, Output: 4.40, CacheRead: 0.275, CacheWrite: 1.10}},

	{"anthropic", "claude-opus-4", Price{Input: 15.00, Output: 75.00, CacheRead: 1.50, CacheWrite: 18.75}},
	{"anthropic", "claude-opus-4-0", Price{Input: 15.00, Output: 75.00, CacheRead: 1.50, CacheWrite: 18.75}},
	{"anthropic", "claude-opus-4-1", Price{Input: 15.00, Output: 75.00, CacheRead: 1.50, CacheWrite: 18.75}},
	{"anthropic", "claude-opus-4-5", Price{Input: 5.00, Output: 25.00, CacheRead: 0.50, CacheWrite: 6.25}},
	{"anthropic", "claude-sonnet-4", Price{Input: 3.00, Output: 15.00, CacheRead: 0.30, CacheWrite: 3.75}},
	{"anthropic", "claude-sonnet-4-0", Price{Input: 3.00, Output: 15.00, CacheRead: 0.30, CacheWrite: 3.75}},
	{"anthropic", "claude-sonnet-4-5", Price{Input: 3.00, Output: 15.00, CacheRead: 0.30, CacheWrite: 3.75}},
	{"anthropic", "claude-3-5-haiku", Price{Input: 0.80, Output: 4.00, CacheRead: 0.08, CacheWrite: 1.00}},
	{"anthropic", "claude-haiku-4-5", Price{Input: 1.00, Output: 5.00, CacheRead: 0.10, CacheWrite: 1.25}},
}

// suffix is what may follow a base name: a snapshot date (-20250514,
// -2024-08-06) or -latest. Anything else (-mini, -6, -pro) names a
// different model, whose price is not assumed.
var suffix = regexp.MustCompile(`^-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$`)

// Lookup returns the price of a provider's model. The model may carry a
// snapshot suffix (claude-sonnet-4-20250514, gpt-4o-2024-08-06) and a
// "provider/" prefix as routers write it; exact names win over base names.
func Lookup(provider, model string) (Price, bool) {
	model = strings.ToLower(strings.TrimSpace(model))
	model = strings.TrimPrefix(model, provider+"/")
	var best *entry
	for i := range table {
		e := &table[i]
		if e.provider != provider || !strings.HasPrefix(model, e.model) {
			continue
		}
		if rest := model[len(e.model):]; rest != "" && !suffix.MatchString(rest) {
			continue
		}
		if best == nil || len(e.model) > len(best.model) {
			best = e
		}
	}
	if best == nil {
		return Price{}, false
	}
	return best.price, true
}

// Cost returns what usage u of a provider's model cost in US dollars, and
// false when the model's price is unknown.
func Cost(provider, model string, u loom.Usage) (float64, bool) {
	p, ok := Lookup(provider, model)
	if !ok {
		return 0, false
	}
	c := float64(u.InputTokens)*p.Input +
		float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead +
		float64(u.CacheWriteTokens)*p.CacheWrite
	return c / 1e6, true
}
