// Package pricing turns token usage into US dollars.
//
// The prices are LiteLLM's list of model prices (a dated snapshot of it
// is bundled; `loom usage prices --update` fetches the current one):
// per million tokens, standard tier, no batch or priority discount. A
// model that charges more for a request whose prompt is above
// LongContextTokens has those prices as its LongContext price. Anything
// not in the list is unknown: Cost reports false and callers leave the
// cost at zero, which loom shows as an unknown cost, never as free. A
// Table adds prices of its own (config.toml's [prices]) in front of the
// list's.
//
// Usage is counted the way loom's providers report it: InputTokens are the
// prompt tokens that were neither read from nor written to a cache, so
// input, cache-read and cache-write tokens never overlap and each is billed
// once at its own rate. OutputTokens include reasoning tokens, which are
// billed as output and not counted again.
package pricing

import (
	"bytes"
	_ "embed"
	"regexp"
	"strings"
	"sync"

	"github.com/loomhq/loom"
)

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

//go:generate go run gen_litellm.go -in model_prices_and_context_window.json -source "LiteLLM 0cd588ad" -date 2026-07-24

// bundledList is the snapshot of LiteLLM's price list loom is built
// with (gen_litellm.go writes it).
//
//go:embed litellm.json
var bundledList []byte

// bundled is the bundled list, read when a price is first looked up.
var bundled = sync.OnceValue(func() *index {
	l, err := ReadList(bytes.NewReader(bundledList))
	if err != nil {
		panic("pricing: the bundled price list: " + err.Error())
	}
	return newIndex(l, "bundled")
})

// suffix is what may follow a base name: a snapshot date (-20250514,
// -2024-08-06) or -latest. Anything else (-mini, -6, -pro) names a
// different model, whose price is not assumed.
var suffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$`) })

// Table is a price table: a price list (the bundled snapshot of
// LiteLLM's, or one fetched since: UseList), and in front of it prices
// added with Add. The zero Table is the bundled list.
type Table struct {
	added []entry
	list  func() *index
}

// Bundled is the bundled price table.
var Bundled = &Table{}

// BundledList returns the bundled snapshot of LiteLLM's price list.
func BundledList() *List { return bundled().list }

// UseList makes t price from l instead of the bundled list, unless the
// bundled list is newer (a later loom than the one that fetched l).
// read is called when a price is first looked up; an error there
// leaves t on the bundled list.
func (t *Table) UseList(read func() (*List, error)) {
	t.list = sync.OnceValue(func() *index {
		l, err := read()
		if err != nil || l.Date < bundled().list.Date {
			return bundled()
		}
		return newIndex(l, "fetched")
	})
}

func (t *Table) index() *index {
	if t == nil || t.list == nil {
		return bundled()
	}
	return t.list()
}

// List returns the list t prices from.
func (t *Table) List() *List { return t.index().list }

// AsOf returns the day the prices of t's list were taken.
func (t *Table) AsOf() string { return t.index().list.Date }

// Add adds the price of a provider's model, or of a model under any
// provider when provider is empty, which wins over the list's price of
// that model. Like listed names, the model may be a base name that
// snapshot suffixes (-20250514, -latest) extend.
func (t *Table) Add(provider, model string, p Price) {
	t.added = append(t.added, entry{strings.ToLower(strings.TrimSpace(provider)), strings.ToLower(strings.TrimSpace(model)), p})
}

// Lookup returns the price of a provider's model in t: an added price
// first, else the list's.
func (t *Table) Lookup(provider, model string) (Price, bool) {
	if t != nil {
		if p, ok := lookup(t.added, provider, model); ok {
			return p, true
		}
	}
	if p, ok := t.index().lookup(provider, model); ok {
		return p, true
	}
	return lookup(fallback, strings.ToLower(strings.TrimSpace(provider)), model)
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
	// Source is "config" for a price added with Add, else the list's:
	// "bundled" for the snapshot loom is built with, "fetched" for one
	// `loom usage prices --update` fetched; "loom" for loom's own price
	// of a model the list leaves out (fallback).
	Source string `json:"source"`
	// Overridden says an added price hides this one of the list.
	Overridden bool `json:"overridden,omitempty"`
}

// Entries lists t: the added prices first, in the order added, then its
// list's, each one an added price hides marked.
func (t *Table) Entries() []Entry {
	var out []Entry
	for _, e := range t.added {
		out = append(out, Entry{Provider: e.provider, Model: e.model, Price: e.price, Source: "config"})
	}
	ix := t.index()
	for _, e := range ix.list.Entries {
		hidden := false
		for _, a := range t.added {
			hidden = hidden || a.model == e.Model && (a.provider == "" || a.provider == e.Provider)
		}
		e.Source, e.Overridden = ix.source, hidden
		out = append(out, e)
	}
	for _, e := range fallback {
		if _, listed := ix.lookup(e.provider, e.model); listed {
			continue
		}
		hidden := false
		for _, a := range t.added {
			hidden = hidden || a.model == e.model && (a.provider == "" || a.provider == e.provider)
		}
		out = append(out, Entry{Provider: e.provider, Model: e.model, Price: e.price, Source: "loom", Overridden: hidden})
	}
	return out
}
