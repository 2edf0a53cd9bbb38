package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// longSession is the length of BenchmarkLongSession's session: 100,000
// messages, as the budgets of the specification say, or 2,000 under
// -short, so that CI's short runs do not spend minutes on the setup.
func longSession() int {
	if testing.Short() {
		return 2000
	}
	return 100000
}

// BenchmarkLongSession measures what the budgets of forks and rewinds
// are about, on one long session in a schema of its own: newest-50 of
// it and of a fork of a fork of it (reading back through both), a fork
// of all of it, a rewind of it to turn 10 (of a fork of it each time,
// made untimed, so that every rewind has the whole session to take),
// and a durable append. Fork and rewind copy nothing, so their cost
// should not depend on the session's length: compare with -short.
func BenchmarkLongSession(b *testing.B) {
	ctx := context.Background()
	st := open(b, freshSchema(b))
	s := &loom.Session{ID: loom.NewID(), UserID: "bench", Key: "cli:bench", Kind: loom.KindMain, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	words := strings.Fields("the session model agent tool search index store write read fork lineage project memory context token cost usage append stream reply")
	n := longSession()
	msgs := make([]*loom.Message, n)
	for i := range msgs {
		var t strings.Builder
		for j := 0; j < 40+i%60; j++ {
			t.WriteString(words[(i*7+j*13)%len(words)])
			t.WriteByte(' ')
		}
		role := loom.RoleUser
		if i%2 == 1 {
			role = loom.RoleAssistant
		}
		msgs[i] = &loom.Message{ID: loom.NewID(), Seq: int64(i + 1), Role: role, CreatedAt: time.Now(),
			Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: t.String()}}}
	}
	if err := st.Import(ctx, []*loom.SessionData{{Session: s, Messages: msgs}}); err != nil {
		b.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
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
			if err := st.Append(ctx, ff, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: fmt.Sprintf("own %d", i)}}}); err != nil {
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
			if err := st.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "a durable message with a few words in it"}}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
