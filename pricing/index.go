package pricing

import (
	"strings"
	"sync"
)

// index finds prices in a list: by provider and name, by provider and
// base name (a snapshot suffix after it), and, for a provider the list
// does not know (a gateway or a subscription that serves other
// companies' models: github-copilot, opencode), by the name alone.
type index struct {
	list *List
	// source is what Entries calls the list: bundled or fetched.
	source string
	// byProvider holds each provider's entries.
	byProvider map[string][]*Entry
	// byModel holds the entries of each name, first-party providers
	// first.
	byModel map[string][]*Entry

	mu   sync.Mutex
	memo map[[2]string]*Entry
}

// firstParty are the providers whose price of a model wins when a
// model is looked up by name alone.
var firstParty = []string{"openai", "anthropic", "google"}

func newIndex(l *List, source string) *index {
	ix := &index{list: l, source: source, byProvider: map[string][]*Entry{}, byModel: map[string][]*Entry{}, memo: map[[2]string]*Entry{}}
	for i := range l.Entries {
		e := &l.Entries[i]
		ix.byProvider[e.Provider] = append(ix.byProvider[e.Provider], e)
	}
	// First-party providers' entries go first in byModel.
	for _, p := range firstParty {
		for _, e := range ix.byProvider[p] {
			ix.byModel[e.Model] = append(ix.byModel[e.Model], e)
		}
	}
	for i := range l.Entries {
		e := &l.Entries[i]
		if !isFirstParty(e.Provider) {
			ix.byModel[e.Model] = append(ix.byModel[e.Model], e)
		}
	}
	return ix
}

func isFirstParty(p string) bool {
	for _, f := range firstParty {
		if p == f {
			return true
		}
	}
	return false
}

// lookup returns the price of provider's model. A provider the list
// knows is priced from its own entries only: a name of another
// provider's is not its model. A provider it does not know is priced by
// the model's name (without a router's "company/" before it) under any
// provider, first-party ones first.
func (ix *index) lookup(provider, model string) (Price, bool) {
	provider = strings.ToLower(strings.TrimSpace(provider))
	model = strings.ToLower(strings.TrimSpace(model))
	key := [2]string{provider, model}
	ix.mu.Lock()
	e, ok := ix.memo[key]
	ix.mu.Unlock()
	if !ok {
		e = ix.find(provider, model)
		ix.mu.Lock()
		ix.memo[key] = e
		ix.mu.Unlock()
	}
	if e == nil {
		return Price{}, false
	}
	return e.Price, true
}

func (ix *index) find(provider, model string) *Entry {
	if model == "" {
		return nil
	}
	model = strings.TrimPrefix(model, provider+"/")
	if own, ok := ix.byProvider[provider]; ok {
		if e := baseMatch(own, model); e != nil {
			return e
		}
		return datedMatch(own, model)
	}
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	if es := ix.byModel[model]; len(es) > 0 {
		return es[0]
	}
	// A snapshot suffix on a name listed without it.
	if loc := suffixAt(model); loc > 0 {
		if es := ix.byModel[model[:loc]]; len(es) > 0 {
			return es[0]
		}
	}
	return nil
}

// baseMatch is the entry of entries named model, else the one whose
// name model extends by a snapshot suffix only, the longest such name.
func baseMatch(entries []*Entry, model string) *Entry {
	var best *Entry
	for _, e := range entries {
		if !strings.HasPrefix(model, e.Model) {
			continue
		}
		rest := model[len(e.Model):]
		if rest == "" {
			return e
		}
		if !suffix().MatchString(rest) {
			continue
		}
		if best == nil || len(e.Model) > len(best.Model) {
			best = e
		}
	}
	return best
}

// datedMatch is the entry of entries that names model with a snapshot
// suffix (claude-3-7-sonnet-20250219 for claude-3-7-sonnet), when the
// list names it by date only and all its dated names cost the same.
func datedMatch(entries []*Entry, model string) *Entry {
	var found *Entry
	for _, e := range entries {
		if len(e.Model) <= len(model) || !strings.HasPrefix(e.Model, model) || !suffix().MatchString(e.Model[len(model):]) {
			continue
		}
		if found != nil && !samePrice(found.Price, e.Price) {
			return nil
		}
		found = e
	}
	return found
}

func samePrice(a, b Price) bool {
	if (a.LongContext == nil) != (b.LongContext == nil) {
		return false
	}
	if a.LongContext != nil && *a.LongContext != *b.LongContext {
		return false
	}
	a.LongContext, b.LongContext = nil, nil
	return a == b
}

// suffixAt is where a snapshot suffix (-20250514, -2024-08-06, -latest)
// ends model, or -1.
func suffixAt(model string) int {
	for _, n := range []int{len("-20250514"), len("-2024-08-06"), len("-latest")} {
		if i := len(model) - n; i > 0 && suffix().MatchString(model[i:]) {
			return i
		}
	}
	return -1
}
