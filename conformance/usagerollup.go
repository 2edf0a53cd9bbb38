package conformance

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// liveSince is a lower bound before every message that does not fall
// on a quarter hour: a filter with it is answered from the messages,
// never from a roll-up an engine keeps.
var liveSince = time.Unix(0, 1e6)

// The usage slices an engine answers quickly (from a roll-up it keeps,
// where it keeps one) are the ones it would sum from the messages, after
// any mix of appends, usage set later, forks, rewinds, trash, restores,
// purges, moves and imports, whenever the report is asked for.
func testUsageRollup(t *testing.T, open Opener) {
	r := &rollup{st: open(t), rng: rand.New(rand.NewPCG(7, 40)), day: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		models: []string{"gpt-x", "claude-y", "gemini-z"}, users: []string{"alice", "bob"}}
	for range 3 {
		r.newOne(t)
	}
	r.check(t, 0, "start")
	ops := []func(t *testing.T) (string, bool){
		r.opNew, r.opAppend, r.opAppend, r.opUsageLater, r.opUsageChanged, r.opFork,
		r.opRewind, r.opTrash, r.opRestore, r.opPurgeOrMove, r.opImport,
	}
	for step := 1; step <= 120; step++ {
		what, done := ops[r.rng.IntN(len(ops))](t)
		if !done {
			continue
		}
		// The report is asked for now and then: what writes marked
		// meanwhile is brought in together.
		if r.rng.IntN(3) == 0 || step == 120 {
			r.check(t, step, what)
		}
	}
}

// rollup is testUsageRollup's store and the random writes it makes: each
// op returns what it did and false where it did nothing to check.
type rollup struct {
	st            loom.Store
	rng           *rand.Rand
	day           time.Time
	models, users []string
	ids           []string
}

func (r *rollup) at() time.Time {
	return r.day.Add(time.Duration(r.rng.IntN(24*60)) * time.Minute).Add(time.Duration(r.rng.IntN(60000)) * time.Millisecond)
}

func (r *rollup) usage() loom.Usage {
	u := loom.Usage{InputTokens: int64(r.rng.IntN(1000)), OutputTokens: int64(r.rng.IntN(100)), CostUSD: float64(r.rng.IntN(100)) / 100, APICalls: 1}
	if r.rng.IntN(5) == 0 {
		u.CacheReadTokens = 250_000
	}
	return u
}

func (r *rollup) reply(u loom.Usage) *loom.Message {
	m := text(loom.RoleAssistant, "reply")
	m.Provider, m.Model, m.Usage, m.CreatedAt = "p", r.models[r.rng.IntN(len(r.models))], u, r.at()
	return m
}

func (r *rollup) prompt() *loom.Message {
	m := text(loom.RoleUser, "prompt")
	m.CreatedAt = r.at()
	return m
}

func (r *rollup) pick() string { return r.ids[r.rng.IntN(len(r.ids))] }

func (r *rollup) newOne(t *testing.T) {
	s := newSession(r.users[r.rng.IntN(len(r.users))], "")
	if r.rng.IntN(2) == 0 {
		s.Project = loom.Project{ID: "fedcba9876543210", Name: "web", Root: "/src/web"}
	}
	mustAppend(t, r.st, s, r.prompt(), r.reply(r.usage()))
	r.ids = append(r.ids, s.ID)
}

// check compares the quick slices with those summed from the messages.
func (r *rollup) check(t *testing.T, step int, what string) {
	t.Helper()
	st, day := r.st, r.day
	// Every user's (the engine groups them) and each user's.
	for _, u := range append([]string{""}, r.users...) {
		for _, f := range []loom.UsageSliceFilter{
			{UserID: u},
			{UserID: u, ProjectID: "fedcba9876543210"},
			{UserID: u, Since: day.Add(6 * time.Hour), Until: day.Add(18*time.Hour + 15*time.Minute)},
		} {
			f.LongContext = 200_000
			quick, err := st.UsageSlices(ctx(t), f)
			if err != nil {
				t.Fatalf("step %d (%s): %v", step, what, err)
			}
			g := f
			if g.Since.IsZero() {
				g.Since = liveSince
			} else {
				g.Since = g.Since.Add(-time.Millisecond)
				g.Until = g.Until.Add(time.Millisecond)
			}
			slow, err := st.UsageSlices(ctx(t), g)
			if err != nil {
				t.Fatal(err)
			}
			if !sameSlices(quick, slow) {
				t.Fatalf("step %d (%s), filter %+v:\nquick %+v\n from messages %+v", step, what, f, quick, slow)
			}
		}
	}
}

func (r *rollup) opNew(t *testing.T) (string, bool) {
	r.newOne(t)
	return "new session", true
}

func (r *rollup) opAppend(t *testing.T) (string, bool) {
	s, err := r.st.Session(ctx(t), r.pick())
	if err != nil || s.DeletedAt != nil {
		return "", false
	}
	if err := r.st.Append(ctx(t), s, r.prompt(), r.reply(r.usage())); err != nil {
		wantCode(t, err, loom.ENOTFOUND)
	}
	return "append", true
}

func (r *rollup) opUsageLater(t *testing.T) (string, bool) {
	st := r.st
	s, err := st.Session(ctx(t), r.pick())
	if err != nil || s.DeletedAt != nil {
		return "", false
	}
	if err := st.Append(ctx(t), s, r.prompt(), r.reply(loom.Usage{})); err != nil {
		return "", false
	}
	msgs := mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 1})
	// A rewound session stores what follows under another
	// id, which UpdateUsage does not reach.
	if err := st.UpdateUsage(ctx(t), s.ID, msgs[len(msgs)-1].Seq, r.usage()); err != nil {
		wantCode(t, err, loom.ENOTFOUND)
	}
	return "usage set after the message", true
}

func (r *rollup) opUsageChanged(t *testing.T) (string, bool) {
	id := r.pick()
	msgs, err := r.st.Messages(ctx(t), id, loom.MessageQuery{Limit: 1})
	if err != nil || len(msgs) == 0 || msgs[0].Role != loom.RoleAssistant {
		return "", false
	}
	if err := r.st.UpdateUsage(ctx(t), id, msgs[0].Seq, r.usage()); err != nil {
		return "", false
	}
	return "usage of a counted message changed", true
}

func (r *rollup) opFork(t *testing.T) (string, bool) {
	s, err := r.st.Session(ctx(t), r.pick())
	if err != nil || s.DeletedAt != nil {
		return "", false
	}
	f, err := r.st.Fork(ctx(t), s.ID, loom.ForkOptions{Turn: r.rng.IntN(s.TurnCount + 1)})
	if err != nil {
		t.Fatalf("fork: %v", err)
	}
	r.ids = append(r.ids, f.ID)
	return "fork", true
}

func (r *rollup) opRewind(t *testing.T) (string, bool) {
	s, err := r.st.Session(ctx(t), r.pick())
	if err != nil || s.DeletedAt != nil || s.TurnCount < 2 {
		return "", false
	}
	f, err := r.st.Rewind(ctx(t), s.ID, loom.RewindOptions{Turn: 1 + r.rng.IntN(s.TurnCount-1)})
	if err != nil {
		t.Fatalf("rewind: %v", err)
	}
	r.ids = append(r.ids, f.ID)
	return "rewind", true
}

func (r *rollup) opTrash(t *testing.T) (string, bool) {
	r.st.Delete(ctx(t), r.pick(), loom.DeleteOptions{})
	return "trash", true
}

func (r *rollup) opRestore(t *testing.T) (string, bool) {
	r.st.Restore(ctx(t), r.pick())
	return "restore", true
}

func (r *rollup) opPurgeOrMove(t *testing.T) (string, bool) {
	id := r.pick()
	if r.rng.IntN(2) == 0 {
		r.st.Delete(ctx(t), id, loom.DeleteOptions{Purge: true})
	} else {
		r.st.UpdateSession(ctx(t), id, loom.SessionUpdate{Project: &loom.Project{ID: "fedcba9876543210", Name: "web", Root: "/src/web"}})
	}
	return "purge or move", true
}

func (r *rollup) opImport(t *testing.T) (string, bool) {
	src := newSession(r.users[r.rng.IntN(len(r.users))], "")
	src.CreatedAt = r.day
	src.UpdatedAt = r.day
	var msgs []*loom.Message
	for i := 1; i <= 6; i++ {
		m := r.prompt()
		if i%2 == 0 {
			m = r.reply(r.usage())
		}
		m.ID, m.Seq = loom.NewID(), int64(i)
		m.Parts[0].ID = loom.NewID()
		msgs = append(msgs, m)
	}
	if err := r.st.Import(ctx(t), []*loom.SessionData{{Session: src, Messages: msgs}}); err != nil {
		t.Fatalf("import: %v", err)
	}
	r.ids = append(r.ids, src.ID)
	return "import", true
}

// sameSlices compares slices with their costs to a millionth, as sums
// in another order may differ in the last bits.
func sameSlices(a, b []loom.UsageSlice) bool {
	key := func(x loom.UsageSlice) string {
		x.Usage.CostUSD = 0
		return fmt.Sprintf("%+v", x)
	}
	return slices.EqualFunc(a, b, func(x, y loom.UsageSlice) bool {
		d := x.Usage.CostUSD - y.Usage.CostUSD
		return key(x) == key(y) && d < 1e-6 && d > -1e-6
	})
}
