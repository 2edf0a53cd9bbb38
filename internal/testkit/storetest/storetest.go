// Package storetest helps tests of real stores. Counting wraps a store
// for tests that count what a command or page asks of it: how many
// session lookups a listing or a lineage costs, whatever the number of
// sessions. The process tests (process.go) run every engine's test
// binary as a second process that appends, holds a lock or is killed
// mid-write, the same way for each engine.
package storetest

import (
	"context"
	"maps"
	"sync"

	"github.com/loomhq/loom"
)

// Counting is a store that counts its session lookups (Session,
// Sessions, Resolve, Family) by method name and passes every call on.
type Counting struct {
	loom.Engine

	mu    sync.Mutex
	calls map[string]int
}

// NewCounting counts the session lookups made of st.
func NewCounting(st loom.Engine) *Counting {
	return &Counting{Engine: st, calls: map[string]int{}}
}

func (c *Counting) count(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[name]++
}

// Calls returns the lookups so far, by method name.
func (c *Counting) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.calls)
}

// Total is the number of lookups so far, each one query to the engine.
func (c *Counting) Total() int {
	n := 0
	for _, v := range c.Calls() {
		n += v
	}
	return n
}

// Session implements loom.Store.
func (c *Counting) Session(ctx context.Context, id string) (*loom.Session, error) {
	c.count("Session")
	return c.Engine.Session(ctx, id)
}

// Sessions implements loom.Store.
func (c *Counting) Sessions(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error) {
	c.count("Sessions")
	return c.Engine.Sessions(ctx, f)
}

// Summaries implements loom.Store.
func (c *Counting) Summaries(ctx context.Context, f loom.SessionFilter) ([]*loom.SessionSummary, error) {
	c.count("Summaries")
	return c.Engine.Summaries(ctx, f)
}

// Resolve implements loom.Store.
func (c *Counting) Resolve(ctx context.Context, ref string, scope loom.ResolveScope) (*loom.Session, error) {
	c.count("Resolve")
	return c.Engine.Resolve(ctx, ref, scope)
}

// Family implements loom.Store.
func (c *Counting) Family(ctx context.Context, q loom.FamilyQuery) ([]*loom.Session, error) {
	c.count("Family")
	return c.Engine.Family(ctx, q)
}
