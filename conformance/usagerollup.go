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
	st := open(t)
	rng := rand.New(rand.NewPCG(7, 40))
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	at := func() time.Time {
		return day.Add(time.Duration(rng.IntN(24*60)) * time.Minute).Add(time.Duration(rng.IntN(60000)) * time.Millisecond)
	}
	models := []string{"gpt-x", "claude-y", "gemini-z"}
	users := []string{"alice", "bob"}
	usage := func() loom.Usage {
		u := loom.Usage{InputTokens: int64(rng.IntN(1000)), OutputTokens: int64(rng.IntN(100)), CostUSD: float64(rng.IntN(100)) / 100, APICalls: 1}
		if rng.IntN(5) == 0 {
			u.CacheReadTokens = 250_000
		}
		return u
	}
	reply := func(u loom.Usage) *loom.Message {
		m := text(loom.RoleAssistant, "reply")
		m.Provider, m.Model, m.Usage, m.CreatedAt = "p", models[rng.IntN(len(models))], u, at()
		return m
	}
	prompt := func() *loom.Message {
		m := text(loom.RoleUser, "prompt")
		m.CreatedAt = at()
		return m
	}
	var ids []string
	pick := func() string { return ids[rng.IntN(len(ids))] }
	newOne := func() {
		s := newSession(users[rng.IntN(len(users))], "")
		if rng.IntN(2) == 0 {
			s.Project = loom.Project{ID: "fedcba9876543210", Name: "web", Root: "/src/web"}
		}
		mustAppend(t, st, s, prompt(), reply(usage()))
		ids = append(ids, s.ID)
	}
	check := func(step int, what string) {
		t.Helper()
		// Every user's (the engine groups them) and each user's.
		for _, u := range append([]string{""}, users...) {
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
	for range 3 {
		newOne()
	}
	check(0, "start")
	for step := 1; step <= 120; step++ {
		var what string
		switch op := rng.IntN(11); op {
		case 0:
			what = "new session"
			newOne()
		case 1, 2:
			what = "append"
			s, err := st.Session(ctx(t), pick())
			if err != nil || s.DeletedAt != nil {
				continue
			}
			if err := st.Append(ctx(t), s, prompt(), reply(usage())); err != nil {
				wantCode(t, err, loom.ENOTFOUND)
			}
		case 3:
			what = "usage set after the message"
			s, err := st.Session(ctx(t), pick())
			if err != nil || s.DeletedAt != nil {
				continue
			}
			if err := st.Append(ctx(t), s, prompt(), reply(loom.Usage{})); err != nil {
				continue
			}
			msgs := mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 1})
			// A rewound session stores what follows under another
			// id, which UpdateUsage does not reach.
			if err := st.UpdateUsage(ctx(t), s.ID, msgs[len(msgs)-1].Seq, usage()); err != nil {
				wantCode(t, err, loom.ENOTFOUND)
			}
		case 4:
			what = "usage of a counted message changed"
			id := pick()
			msgs, err := st.Messages(ctx(t), id, loom.MessageQuery{Limit: 1})
			if err != nil || len(msgs) == 0 || msgs[0].Role != loom.RoleAssistant {
				continue
			}
			if err := st.UpdateUsage(ctx(t), id, msgs[0].Seq, usage()); err != nil {
				continue
			}
		case 5:
			what = "fork"
			s, err := st.Session(ctx(t), pick())
			if err != nil || s.DeletedAt != nil {
				continue
			}
			f, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{Turn: rng.IntN(s.TurnCount + 1)})
			if err != nil {
				t.Fatalf("fork: %v", err)
			}
			ids = append(ids, f.ID)
		case 6:
			what = "rewind"
			s, err := st.Session(ctx(t), pick())
			if err != nil || s.DeletedAt != nil || s.TurnCount < 2 {
				continue
			}
			f, err := st.Rewind(ctx(t), s.ID, loom.RewindOptions{Turn: 1 + rng.IntN(s.TurnCount-1)})
			if err != nil {
				t.Fatalf("rewind: %v", err)
			}
			ids = append(ids, f.ID)
		case 7:
			what = "trash"
			st.Delete(ctx(t), pick(), loom.DeleteOptions{})
		case 8:
			what = "restore"
			st.Restore(ctx(t), pick())
		case 9:
			what = "purge or move"
			id := pick()
			if rng.IntN(2) == 0 {
				st.Delete(ctx(t), id, loom.DeleteOptions{Purge: true})
			} else {
				st.UpdateSession(ctx(t), id, loom.SessionUpdate{Project: &loom.Project{ID: "fedcba9876543210", Name: "web", Root: "/src/web"}})
			}
		case 10:
			what = "import"
			src := newSession(users[rng.IntN(len(users))], "")
			src.CreatedAt = day
			src.UpdatedAt = day
			var msgs []*loom.Message
			for i := 1; i <= 6; i++ {
				m := prompt()
				if i%2 == 0 {
					m = reply(usage())
				}
				m.ID, m.Seq = loom.NewID(), int64(i)
				m.Parts[0].ID = loom.NewID()
				msgs = append(msgs, m)
			}
			if err := st.Import(ctx(t), []*loom.SessionData{{Session: src, Messages: msgs}}); err != nil {
				t.Fatalf("import: %v", err)
			}
			ids = append(ids, src.ID)
		}
		// The report is asked for now and then: what writes marked
		// meanwhile is brought in together.
		if rng.IntN(3) == 0 || step == 120 {
			check(step, what)
		}
	}
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
