package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// sourceCopy is what an import of the first n messages of one source
// session stores: the id, derived from the source, and the message ids,
// the source's own, are the same on every machine.
func sourceCopy(n int) *loom.SessionData {
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	d := &loom.SessionData{Session: &loom.Session{ID: "019de2f3-1c4e-7d3f-9a2b-5e6f7a8b9c0d", UserID: "alice",
		Key: "claude-code:s1", Surface: "claude-code", Title: "the source", Kind: loom.KindMain,
		Source: &loom.Source{Tool: "claude-code", Path: "/home/alice/.claude/projects/p/s1.jsonl"}, CreatedAt: at}}
	for i := 1; i <= n; i++ {
		role := loom.RoleUser
		if i%2 == 0 {
			role = loom.RoleAssistant
		}
		m := sourceMessage(i, role, at)
		d.Session.Usage.Add(m.Usage) // as the importer counts it
		d.Messages = append(d.Messages, m)
	}
	d.Session.UpdatedAt = at.Add(time.Duration(n) * time.Second)
	return d
}

func sourceMessage(i int, role string, at time.Time) *loom.Message {
	m := &loom.Message{ID: fmt.Sprintf("src-%d", i), Seq: int64(i), Role: role, CreatedAt: at.Add(time.Duration(i) * time.Second),
		Parts: []loom.Part{{ID: fmt.Sprintf("src-%d/0", i), Type: loom.PartText, Text: fmt.Sprintf("okapi line %d", i)}}}
	if role == loom.RoleAssistant {
		m.Usage = loom.Usage{InputTokens: 10, OutputTokens: int64(i), APICalls: 1}
	}
	return m
}

// Machine A imports 10 messages of a source file; machine B imports 8 of
// them, and later the rest of the file, grown to 12. Whichever applies
// the other's records first, and whether B grows its copy before or
// after it gets A's, both hold one session of the 12 messages, without a
// conflict fork, and a search finds each message once.
func TestApplySyncImportsOfOneSource(t *testing.T) {
	for _, order := range []string{"B grows, B applies first", "B grows, A applies first", "B applies, then grows"} {
		t.Run(order, func(t *testing.T) {
			ctx := context.Background()
			a, b := syncPair(t)
			if err := a.Import(ctx, []*loom.SessionData{sourceCopy(10)}); err != nil {
				t.Fatal(err)
			}
			short := sourceCopy(8)
			if err := b.Import(ctx, []*loom.SessionData{short}); err != nil {
				t.Fatal(err)
			}
			grow := func() {
				// What B's importer does with the grown file: append
				// what its copy lacks.
				x, err := b.Session(ctx, short.Session.ID)
				if err != nil {
					t.Fatal(err)
				}
				if err := b.Append(ctx, x, sourceCopy(12).Messages[x.MessageCount:]...); err != nil {
					t.Fatal(err)
				}
			}
			switch order {
			case "B grows, B applies first":
				grow()
				applyAll(t, b, pull(t, a, 0))
				applyAll(t, a, pull(t, b, 0))
			case "B grows, A applies first":
				grow()
				applyAll(t, a, pull(t, b, 0))
				applyAll(t, b, pull(t, a, 0))
			default:
				applyAll(t, b, pull(t, a, 0))
				if x, _ := b.Session(ctx, short.Session.ID); x.MessageCount != 10 {
					t.Fatalf("B holds %d messages after applying A's 10", x.MessageCount)
				}
				grow()
				applyAll(t, a, pull(t, b, 0))
			}
			v := sameView(t, a, b, "okapi")
			if len(v.Sessions) != 1 {
				t.Fatalf("%d sessions, want 1:\n%s", len(v.Sessions), dumpSessions(v.Sessions))
			}
			s := v.Sessions[0]
			if msgs := v.Messages[s.ID]; len(msgs) != 12 || s.MessageCount != 12 || msgs[11].ID != "src-12" {
				t.Fatalf("the session holds %d messages (count %d):\n%s", len(msgs), s.MessageCount, dumpMessages(msgs))
			}
			if len(v.Hits["okapi"]) != 12 {
				t.Fatalf("okapi found %d times, want 12:\n%s", len(v.Hits["okapi"]), dumpHits(v.Hits))
			}
			if want := int64(10 * 6); s.Usage.InputTokens != want || !s.UpdatedAt.Equal(sourceCopy(12).Messages[11].CreatedAt) {
				t.Errorf("input tokens %d, want %d; updated at %v", s.Usage.InputTokens, want, s.UpdatedAt)
			}
		})
	}
}
