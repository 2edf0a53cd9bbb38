// Package pricing turns token usage into US dollars for well-known models.
//
// The figures are the providers' published list prices per million tokens
// (AsOf: standard tier, no batch or priority discount). A model that
// charges more for a request whose prompt is above LongContextTokens has
// those prices as its LongContext price. Anything not in the table is
// unknown: Cost reports false and callers leave the cost at zero, which
// loom shows as an unknown cost, never as free. A Table adds prices of
// its own (config.toml's [prices]) in front of the bundled ones.
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
	"sync"

	"github.com/loomhq/loom"
)

// AsOf is the month the prices in the table were taken from the providers'
// published list prices.
const AsOf = "2026-11"

// LongContextTokens is the prompt size (input, cache-read and cache-write
// tokens of one request) above which a model with a LongContext price
// bills every token of the request at that price, as Anthropic and
// Google do.
const LongContextTokens = 200_000

// Price is what one million tokens of each kind cost, in US dollars.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
	// CacheWrite1h is the price of a token written to a cache kept for
	// an hour (Anthropic's 1-hour cache); zero when the model has no
	// such cache or its price is CacheWrite's, which it then costs.
	CacheWrite1h float64 `json:"cache_write_1h,omitempty"`
	// LongContext is the price of a request whose prompt is above
	// LongContextTokens, nil when the model has no such tier.
	LongContext *Price `json:"long_context,omitempty"`
}

type entry struct {
	// provider is empty in an added price that holds for any provider.
	provider string
	model    string
	price    Price
}

// Prices shared by several models.
var (
	gpt5     = Price{Input: 1.25, Output: 10.00, CacheRead: 0.125, CacheWrite: 1.25}
	gpt52    = Price{Input: 1.75, Output: 14.00, CacheRead: 0.175, CacheWrite: 1.75}
	gpt5Mini = Price{Input: 0.25, Output: 2.00, CacheRead: 0.025, CacheWrite: 0.25}
	// Anthropic bills a cache write for five minutes at 1.25 times the
	// input price, one for an hour at twice it.
	opus4  = Price{Input: 15.00, Output: 75.00, CacheRead: 1.50, CacheWrite: 18.75, CacheWrite1h: 30.00}
	opus45 = Price{Input: 5.00, Output: 25.00, CacheRead: 0.50, CacheWrite: 6.25, CacheWrite1h: 10.00}
	// Sonnet 4 and later read up to a million tokens; a prompt above
	// 200,000 is billed at the long-context rates.
	sonnet4 = Price{Input: 3.00, Output: 15.00, CacheRead: 0.30, CacheWrite: 3.75, CacheWrite1h: 6.00,
		LongContext: &Price{Input: 6.00, Output: 22.50, CacheRead: 0.60, CacheWrite: 7.50, CacheWrite1h: 12.00}}
	sonnet3  = Price{Input: 3.00, Output: 15.00, CacheRead: 0.30, CacheWrite: 3.75, CacheWrite1h: 6.00}
	gemini25 = Price{Input: 1.25, Output: 10.00, CacheRead: 0.125, CacheWrite: 1.25,
		LongContext: &Price{Input: 2.50, Output: 15.00, CacheRead: 0.25, CacheWrite: 2.50}}
	gemini3 = Price{Input: 2.00, Output: 12.00, CacheRead: 0.20, CacheWrite: 2.00,
		LongContext: &Price{Input: 4.00, Output: 18.00, CacheRead: 0.40, CacheWrite: 4.00}}
)

// table lists models by their base name. OpenAI and Google bill cache
// writes as ordinary input (Google's explicit caches also bill storage
// by the hour, which no token count says); Anthropic prices its 5-minute
// and 1-hour cache writes apart. Codex models cost what the model they are tuned
// from costs.
var table = []entry{
	{"openai", "gpt-4o", Price{Input: 2.50, Output: 10.00, CacheRead: 1.25, CacheWrite: 2.50}},
	{"openai", "gpt-4o-2024-05-13", Price{Input: 5.00, Output: 15.00, CacheRead: 5.00, CacheWrite: 5.00}},
	{"openai", "gpt-4o-mini", Price{Input: 0.15, Output: 0.60, CacheRead: 0.075, CacheWrite: 0.15}},
	{"openai", "gpt-4.1", Price{Input: 2.00, Output: 8.00, CacheRead: 0.50, CacheWrite: 2.00}},
	{"openai", "gpt-4.1-mini", Price{Input: 0.40, Output: 1.60, CacheRead: 0.10, CacheWrite: 0.40}},
	{"openai", "gpt-4.1-nano", Price{Input: 0.10, Output: 0.40, CacheRead: 0.025, CacheWrite: 0.10}},
	{"openai", "o1", Price{Input: 15.00, Output: 60.00, CacheRead: 7.50, CacheWrite: 15.00}},
	{"openai", "o3", Price{Input: 2.00, Output: 8.00, CacheRead: 0.50, CacheWrite: 2.00}},
	{"openai", "o3-mini", Price{Input: 1.10, Output: 4.40, CacheRead: 0.55, CacheWrite: 1.10}},
	{"openai", "o4-mini", Price{Input: 1.10, Output: 4.40, CacheRead: 0.275, CacheWrite: 1.10}},
	{"openai", "codex-mini-latest", Price{Input: 1.50, Output: 6.00, CacheRead: 0.375, CacheWrite: 1.50}},
	{"openai", "gpt-5", gpt5},
	{"openai", "gpt-5-codex", gpt5},
	{"openai", "gpt-5-mini", gpt5Mini},
	{"openai", "gpt-5-nano", Price{Input: 0.05, Output: 0.40, CacheRead: 0.005, CacheWrite: 0.05}},
	{"openai", "gpt-5.1", gpt5},
	{"openai", "gpt-5.1-codex", gpt5},
	{"openai", "gpt-5.1-codex-max", gpt5},
	{"openai", "gpt-5.1-codex-mini", gpt5Mini},
	{"openai", "gpt-5.2", gpt52},
	{"openai", "gpt-5.2-codex", gpt52},

	{"anthropic", "claude-opus-4", opus4},
	{"anthropic", "claude-opus-4-0", opus4},
	{"anthropic", "claude-opus-4-1", opus4},
	{"anthropic", "claude-opus-4-5", opus45},
	{"anthropic", "claude-opus-4-6", opus45},
	{"anthropic", "claude-sonnet-4", sonnet4},
	{"anthropic", "claude-sonnet-4-0", sonnet4},
	{"anthropic", "claude-sonnet-4-5", sonnet4},
	{"anthropic", "claude-sonnet-4-6", sonnet4},
	{"anthropic", "claude-3-7-sonnet", sonnet3},
	{"anthropic", "claude-3-5-sonnet", sonnet3},
	{"anthropic", "claude-3-opus", opus4},
	{"anthropic", "claude-3-5-haiku", Price{Input: 0.80, Output: 4.00, CacheRead: 0.08, CacheWrite: 1.00, CacheWrite1h: 1.60}},
	{"anthropic", "claude-3-haiku", Price{Input: 0.25, Output: 1.25, CacheRead: 0.03, CacheWrite: 0.30, CacheWrite1h: 0.50}},
	{"anthropic", "claude-haiku-4-5", Price{Input: 1.00, Output: 5.00, CacheRead: 0.10, CacheWrite: 1.25, CacheWrite1h: 2.00}},

	{"google", "gemini-2.0-flash", Price{Input: 0.10, Output: 0.40, CacheRead: 0.025, CacheWrite: 0.10}},
	{"google", "gemini-2.0-flash-lite", Price{Input: 0.075, Output: 0.30, CacheRead: 0.075, CacheWrite: 0.075}},
	{"google", "gemini-2.5-pro", gemini25},
	{"google", "gemini-2.5-flash", Price{Input: 0.30, Output: 2.50, CacheRead: 0.03, CacheWrite: 0.30}},
	{"google", "gemini-2.5-flash-lite", Price{Input: 0.10, Output: 0.40, CacheRead: 0.01, CacheWrite: 0.10}},
	{"google", "gemini-3-pro-preview", gemini3},
	{"google", "gemini-3.1-pro-preview", gemini3},
	{"google", "gemini-3-flash-preview", Price{Input: 0.50, Output: 3.00, CacheRead: 0.05, CacheWrite: 0.50}},
}

// suffix is what may follow a base name: a snapshot date (-20250514,
// -2024-08-06) or -latest. Anything else (-mini, -6, -pro) names a
// different model, whose price is not assumed.
var suffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$`) })

// Table is a price table: the bundled prices, and in front of them
// prices added with Add. The zero Table is the bundled one.
type Table struct {
	added []entry
}

// Bundled is the bundled price table.
var Bundled = &Table{}

// Add adds the price of a provider's model, or of a model under any
// provider when provider is empty, which wins over the bundled price of
// that model. Like bundled names, the model may be a base name that
// snapshot suffixes (-20250514, -latest) extend.
func (t *Table) Add(provider, model string, p Price) {
	t.added = append(t.added, entry{strings.ToLower(strings.TrimSpace(provider)), strings.ToLower(strings.TrimSpace(model)), p})
}

// Lookup returns the price of a provider's model in t: an added price
// first, else a bundled one.
func (t *Table) Lookup(provider, model string) (Price, bool) {
	if t != nil {
		if p, ok := lookup(t.added, provider, model); ok {
			return p, true
		}
	}
	return lookup(table, provider, model)
}

// Cost returns what usage u of a provider's model cost in US dollars at
// t's prices, long saying whether u is of a request whose prompt was
// above LongContextTokens; false when the model's price is unknown.
func (t *Table) Cost(provider, model string, u loom.Usage, long bool) (float64, bool) {
	p, ok := t.Lookup(provider, model)
	if !ok {
		return 0, false
	}
	if long && p.LongContext != nil {
		p = *p.LongContext
	}
	hour := p.CacheWrite1h
	if hour == 0 {
		hour = p.CacheWrite
	}
	c := float64(u.InputTokens)*p.Input +
		float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead +
		float64(u.CacheWriteTokens-u.CacheWrite1hTokens)*p.CacheWrite +
		float64(u.CacheWrite1hTokens)*hour
	return c / 1e6, true
}

// Lookup returns the price of a provider's model. The model may carry a
// snapshot suffix (claude-sonnet-4-20250514, gpt-4o-2024-08-06) and a
// "provider/" prefix as routers write it; exact names win over base names.
func Lookup(provider, model string) (Price, bool) { return Bundled.Lookup(provider, model) }

func lookup(entries []entry, provider, model string) (Price, bool) {
	model = strings.ToLower(strings.TrimSpace(model))
	model = strings.TrimPrefix(model, provider+"/")
	var best *entry
	for i := range entries {
		e := &entries[i]
		if (e.provider != provider && e.provider != "") || !strings.HasPrefix(model, e.model) {
			continue
		}
		if rest := model[len(e.model):]; rest != "" && !suffix().MatchString(rest) {
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
// false when the model's price is unknown. It is the bundled price of a
// request below LongContextTokens, or above it when u's prompt is.
func Cost(provider, model string, u loom.Usage) (float64, bool) {
	return Bundled.Cost(provider, model, u, Long(u))
}

// Long reports whether u's prompt (input, cache-read and cache-write
// tokens) is above LongContextTokens.
func Long(u loom.Usage) bool {
	return u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens > LongContextTokens
}

// Entry is one row of a price table as Entries lists it.
type Entry struct {
	// Provider is empty for an added price that holds for any provider.
	Provider string `json:"provider"`
	// Model is a base name: snapshot suffixes (-20250514, -latest)
	// extend it.
	Model string `json:"model"`
	Price
	// Source is "bundled", or "config" for a price added with Add.
	Source string `json:"source"`
	// Overridden says an added price hides this bundled one.
	Overridden bool `json:"overridden,omitempty"`
}

// Entries lists t: the added prices first, in the order added, then the
// bundled table, each bundled price hidden by an added one marked.
func (t *Table) Entries() []Entry {
	var out []Entry
	for _, e := range t.added {
		out = append(out, Entry{Provider: e.provider, Model: e.model, Price: e.price, Source: "config"})
	}
	for _, e := range table {
		hidden := false
		for _, a := range t.added {
			hidden = hidden || a.model == e.model && (a.provider == "" || a.provider == e.provider)
		}
		out = append(out, Entry{Provider: e.provider, Model: e.model, Price: e.price, Source: "bundled", Overridden: hidden})
	}
	return out
}
