package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/workload"
)

// LongSessionLength is the length of LongSession's session: 100,000
// messages, as the budgets of the specification say, or 2,000 under
// -short, so that CI's short runs do not spend minutes on the setup.
func LongSessionLength() int {
	if testing.Short() {
		return 2000
	}
	return 100000
}

// LongSession measures what the budgets of forks and rewinds are about,
// on one long session imported into st, a fresh store (ready, when not
// nil, runs after the import: an engine's statistics): newest-50 of it
// and of a fork of a fork of it (reading back through both), a fork of
// all of it, a rewind of it to turn 10 (of a fork of it each time, made
// untimed, so that every rewind has the whole session to take), and a
// durable append. Fork and rewind copy nothing, so their cost should
// not depend on the session's length: compare with -short.
func LongSession(b *testing.B, st loom.Store, ready func() error) {
	ctx := context.Background()
	now := time.Now()
	s := &loom.Session{ID: loom.NewID(), UserID: "bench", Key: "cli:bench", Kind: loom.KindMain, CreatedAt: now, UpdatedAt: now}
	msgs := make([]*loom.Message, LongSessionLength())
	for i := range msgs {
		msgs[i] = workload.Message(i, workload.Text(i), now)
	}
	if err := st.Import(ctx, []*loom.SessionData{{Session: s, Messages: msgs}}); err != nil {
		b.Fatal(err)
	}
	if ready != nil {
		if err := ready(); err != nil {
			b.Fatal(err)
		}
	}
	say := func(x *loom.Session, text string) error {
		return st.Append(ctx, x, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: text}}})
	}
	b.Run("newest-50", func(b *testing.B) {
		for b.Loop() {
			if m, err := st.Messages(ctx, s.ID, loom.MessageQuery{Limit: 50}); err != nil || len(m) != 50 {
				b.Fatal(err)
			}
		}
	})
	b.Run("newest-50-of-a-fork-of-a-fork", func(b *testing.B) {
		f, err := st.Fork(ctx, s.ID, loom.ForkOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ff, err := st.Fork(ctx, f.ID, loom.ForkOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for i := range 20 {
			if err := say(ff, fmt.Sprintf("own %d", i)); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			if m, err := st.Messages(ctx, ff.ID, loom.MessageQuery{Limit: 50}); err != nil || len(m) != 50 {
				b.Fatal(err)
			}
		}
	})
	b.Run("fork", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.Fork(ctx, s.ID, loom.ForkOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rewind-to-turn-10", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			f, err := st.Fork(ctx, s.ID, loom.ForkOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := st.Rewind(ctx, f.ID, loom.RewindOptions{Turn: 10}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			if err := say(s, "a durable message with a few words in it"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
