package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/hooks"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/internal/safefile"
)

// warningTTL is how long a check behind the warning is reused: the chat
// and the status line start often, and an agent's deletions are days
// away.
const warningTTL = 10 * time.Minute

// warningCache is the last check behind the warning, in loom's cache
// directory.
type warningCache struct {
	At   time.Time `json:"at"`
	DB   string    `json:"db"`
	User string    `json:"user"`
	// Known is false when the check did not finish in its time.
	Known bool `json:"known"`
	// Unheld counts, by agent, the sessions it will delete within the
	// horizon that loom does not hold whole.
	Unheld map[string]int `json:"unheld"`
}

// Warner gives the one line the chat's first screen and the status line
// show when it matters: sessions an agent will delete within 7 days
// that loom does not hold whole. It reuses a check made in the last ten
// minutes; else it checks, for at most budget (what it has not found by
// then it finds in the background, for the next one, while the process
// lasts).
type Warner struct {
	opts *Options
	db   func() (string, error)
	user func() string
}

// NewWarner is the warner of inv's run.
func NewWarner(inv *command.Invocation) *Warner {
	return &Warner{opts: NewOptions(inv), db: inv.DBURL, user: inv.User}
}

// Line is the warning for the chat ("" when nothing is at risk, or it
// is not known yet).
func (w *Warner) Line(ctx context.Context, budget time.Duration) string {
	c := w.check(ctx, budget)
	if c == nil || len(c.Unheld) == 0 {
		return ""
	}
	var names []string
	n := 0
	for _, a := range slices.Sorted(maps.Keys(c.Unheld)) {
		names = append(names, hooks.Label(a))
		n += c.Unheld[a]
	}
	return fmt.Sprintf("%s will delete %s within 7 days that loom does not hold whole (loom doctor names them)",
		joinAnd(names), human.Plural(n, "session"))
}

// Short is the warning for a status line.
func (w *Warner) Short(ctx context.Context, budget time.Duration) string {
	c := w.check(ctx, budget)
	if c == nil || len(c.Unheld) == 0 {
		return ""
	}
	n := 0
	for _, v := range c.Unheld {
		n += v
	}
	return fmt.Sprintf("⚠ %s at risk (loom doctor)", human.Plural(n, "session"))
}

func joinAnd(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// check is the cached check when fresh, else a new one within budget.
func (w *Warner) check(ctx context.Context, budget time.Duration) *warningCache {
	d, err := w.opts.Dirs()
	if err != nil {
		return nil
	}
	db, err := w.db()
	if err != nil {
		return nil
	}
	user := w.user()
	path := command.AtRiskCache(d)
	now := w.opts.Now()
	var c warningCache
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &c) == nil &&
		c.DB == db && c.User == user && now.Sub(c.At) < warningTTL && now.Sub(c.At) >= 0 {
		if !c.Known {
			return nil
		}
		return &c
	}
	done := make(chan *warningCache, 1)
	// mu orders the two writes of the cache: a check that ends after
	// the budget is not overwritten by the mark that it was not known.
	var mu sync.Mutex
	finished := false
	go func() {
		o := *w.opts
		o.User, o.Within = user, DefaultWithin
		fresh := &warningCache{At: now, DB: db, User: user, Known: true, Unheld: map[string]int{}}
		// Its own context: the check may outlive the budget.
		rep, err := Check(context.WithoutCancel(ctx), &o)
		if err != nil {
			done <- nil
			return
		}
		for _, a := range rep.Agents {
			for _, s := range a.AtRisk {
				if s.Held != importer.HeldWhole {
					fresh.Unheld[a.Agent]++
				}
			}
		}
		mu.Lock()
		writeCache(path, fresh)
		finished = true
		mu.Unlock()
		done <- fresh
	}()
	select {
	case c := <-done:
		return c
	case <-time.After(budget):
		// Not known yet: the next start does not wait for it again
		// unless the background check writes it meanwhile.
		mu.Lock()
		if !finished {
			writeCache(path, &warningCache{At: now, DB: db, User: user})
		}
		mu.Unlock()
		return nil
	}
}

func writeCache(path string, c *warningCache) {
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o700) == nil {
		safefile.WriteFile(path, b, 0o600)
	}
}
