package synctest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// The rules of applying another machine's records: sessions copied,
// refusals, merged metadata, parts and usage, imports of one source.

// Sessions made, messages appended and sessions imported on one machine
// read the same on another that applied its records: ids, seq, times,
// text, titles, search. Applying again changes nothing, and applying
// records nothing in the applying store's own log.
func testApplySyncCopiesSessions(t *testing.T, newStore Factory) {
	ctx := context.Background()
	a, b := pair(t, newStore)
	s := &loom.Session{UserID: "alice", Key: "cli:api"}
	Say(t, a, s, loom.RoleUser, "how do zebras sleep")
	Say(t, a, s, loom.RoleAssistant, "standing up, mostly")
	Say(t, a, s, loom.RoleUser, "and giraffes", "too?")
	other := &loom.Session{UserID: "alice", Title: "notes", Project: loom.Project{ID: "p1", Name: "api", Root: "/src/api"}}
	Say(t, a, other, loom.RoleUser, "remember the zebra")
	now := time.Now().UTC().Truncate(time.Millisecond)
	imp := &loom.SessionData{
		Session: &loom.Session{ID: loom.NewID(), UserID: "alice", Title: "imported", CreatedAt: now, UpdatedAt: now,
			Source: &loom.Source{Tool: "claude", Path: "/x.jsonl"}},
		Messages: []*loom.Message{
			{ID: loom.NewID(), Seq: 1, Role: loom.RoleUser, CreatedAt: now, Parts: []loom.Part{{ID: "p1", Type: loom.PartText, Text: "an imported zebra"}}},
			{ID: loom.NewID(), Seq: 2, Role: loom.RoleAssistant, CreatedAt: now, Usage: loom.Usage{InputTokens: 5}, Parts: []loom.Part{{ID: "p2", Type: loom.PartText, Text: "yes"}}},
		}}
	if err := a.Import(ctx, []*loom.SessionData{imp}); err != nil {
		t.Fatal(err)
	}

	recs := Pull(t, a, 0)
	ApplyAll(t, b, recs)
	want := SameView(t, a, b, "zebra", "giraffes")
	if len(want.Sessions) != 3 || Searches(a) && len(want.Hits["zebra"]) != 3 {
		t.Fatalf("%d sessions, %d hits for zebra; want 3, 3", len(want.Sessions), len(want.Hits["zebra"]))
	}
	ApplyAll(t, b, recs)
	if got := ViewOf(t, b, "zebra", "giraffes"); !reflect.DeepEqual(got, want) {
		t.Fatal("applying the records again changed the store")
	}
	if log := SyncLog(t, b); len(log) != 0 {
		t.Fatalf("applying wrote %d records to the store's own log", len(log))
	}

	// B continues the session; A applies B's records and the two agree.
	cont := want.Sessions[0]
	if cont.ID != s.ID {
		cont, _ = b.Session(ctx, s.ID)
	}
	Say(t, b, cont, loom.RoleAssistant, "giraffes sleep standing too")
	ApplyAll(t, a, Pull(t, b, 0))
	SameView(t, a, b, "zebra", "giraffes")
	if n := len(SyncLog(t, a)); n != len(recs) {
		t.Fatalf("A's log holds %d records after applying B's, want its own %d", n, len(recs))
	}
}

// A record whose index skips one of its host's is refused, and so is one
// stamped hours ahead of this machine's clock; neither changes the store,
// and the records apply once what was missing arrives.
func testApplySyncRefusesGapsAndClocksAhead(t *testing.T, newStore Factory) {
	ctx := context.Background()
	a, b := pair(t, newStore)
	s := &loom.Session{UserID: "alice"}
	Say(t, a, s, loom.RoleUser, "one")
	Say(t, a, s, loom.RoleUser, "two")
	recs := Pull(t, a, 0) // created, appended, appended
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	if err := b.ApplySync(ctx, recs[1].Header, recs[1].Payload); !errors.Is(err, sessionstore.ErrGap) {
		t.Fatalf("applying record 2 first: %v, want sessionstore.ErrGap", err)
	}
	ApplyAll(t, b, recs[:1])
	if err := b.ApplySync(ctx, recs[2].Header, recs[2].Payload); !errors.Is(err, sessionstore.ErrGap) {
		t.Fatalf("applying record 3 after 1: %v, want sessionstore.ErrGap", err)
	}
	ahead := recs[1]
	ahead.Header.HLC = synclog.NewHLC(time.Now().Add(3*time.Hour), 0)
	if err := b.ApplySync(ctx, ahead.Header, ahead.Payload); !errors.Is(err, synclog.ErrClockAhead) {
		t.Fatalf("a record 3 hours ahead: %v, want ErrClockAhead", err)
	}
	if msgs, err := b.Messages(ctx, s.ID, loom.MessageQuery{}); err != nil || len(msgs) != 0 {
		t.Fatalf("refused records left %d messages (%v)", len(msgs), err)
	}
	ApplyAll(t, b, recs[1:])
	SameView(t, a, b)
}

// Records this loom does not apply yet are refused by name, never
// skipped: the store's vector does not move past them.
func testApplySyncRefusesWhatItCannotApply(t *testing.T, newStore Factory) {
	ctx := context.Background()
	_, b := pair(t, newStore)
	h := synclog.Header{Host: synclog.NewHostID(), Index: 1, HLC: synclog.NewHLC(time.Now(), 0), KeyID: KeyID}
	var na *sessionstore.NotAppliedError
	for range 2 {
		if err := b.ApplySync(ctx, h, futureRecord{}); !errors.As(err, &na) || na.Type != 200 || !strings.Contains(err.Error(), "update loom") {
			t.Fatalf("applying a record of a kind this loom does not know: %v, want a NotAppliedError", err)
		}
	}
}

// futureRecord is a record of a kind a newer loom might write.
type futureRecord struct{}

func (futureRecord) Type() synclog.Type { return 200 }
func (futureRecord) Validate() error    { return nil }

// Two machines change one session's metadata offline: each field ends
// with the latest write, on both, whichever applies first; an archive
// stamped after an append keeps the session archived though the append
// arrives after it.
func testApplySyncMergesMetadata(t *testing.T, newStore Factory) {
	ctx := context.Background()
	for _, bFirst := range []bool{false, true} {
		a, b, c := clockedPair(t, newStore)
		s := &loom.Session{UserID: "alice", Key: "cli:api", Title: "start"}
		Say(t, a, s, loom.RoleUser, "hello")
		ai, bi := exchange(t, a, b, 0, 0, bFirst)

		rename := func(st Store, u loom.SessionUpdate) {
			t.Helper()
			c.tick()
			if _, err := st.UpdateSession(ctx, s.ID, u); err != nil {
				t.Fatal(err)
			}
		}
		str := func(v string) *string { return &v }
		rename(a, loom.SessionUpdate{Title: str("auth"), Description: str("from the laptop")})
		rename(b, loom.SessionUpdate{Model: str("opus")})
		rename(b, loom.SessionUpdate{Title: str("login")})
		rename(a, loom.SessionUpdate{Cwd: str("/src/api")})
		ai, bi = exchange(t, a, b, ai, bi, bFirst)
		got := SameView(t, a, b).Sessions[0]
		if got.Title != "login" || got.Description != "from the laptop" || got.Model != "opus" || got.Cwd != "/src/api" {
			t.Fatalf("b first %v: merged %q %q %q %q; want login, from the laptop, opus, /src/api",
				bFirst, got.Title, got.Description, got.Model, got.Cwd)
		}

		// B appends, then A archives without having seen the append.
		c.tick()
		cur, _ := b.Session(ctx, s.ID)
		Say(t, b, cur, loom.RoleAssistant, "hi")
		yes := true
		rename(a, loom.SessionUpdate{Archived: &yes})
		exchange(t, a, b, ai, bi, bFirst)
		if got := SameView(t, a, b).Sessions[0]; got.ArchivedAt == nil || got.MessageCount != 2 {
			t.Fatalf("b first %v: archived %v with %d messages; want archived with 2", bFirst, got.ArchivedAt, got.MessageCount)
		}
	}
}

// A tool's result wins over another machine's later "interrupted", and
// the latest usage update wins, on both machines whatever the order.
func testApplySyncMergesPartsAndUsage(t *testing.T, newStore Factory) {
	ctx := context.Background()
	for _, bFirst := range []bool{false, true} {
		a, b, c := clockedPair(t, newStore)
		s := &loom.Session{UserID: "alice"}
		Say(t, a, s, loom.RoleUser, "list files")
		call := loom.Part{Type: loom.PartTool, CallID: "c1", Name: "bash", Status: loom.ToolRunning, Input: json.RawMessage(`{"cmd":"ls"}`)}
		m := &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{call}}
		if err := a.Append(ctx, s, m); err != nil {
			t.Fatal(err)
		}
		ai, bi := exchange(t, a, b, 0, 0, bFirst)

		c.tick()
		done := m.Parts[0]
		done.Status, done.Output = loom.ToolCompleted, json.RawMessage(`"README.md"`)
		if err := a.UpdatePart(ctx, s.ID, m.Seq, done); err != nil {
			t.Fatal(err)
		}
		if err := a.UpdateUsage(ctx, s.ID, m.Seq, loom.Usage{InputTokens: 7}); err != nil {
			t.Fatal(err)
		}
		c.tick()
		if n, err := b.RepairInterrupted(ctx, s.ID); err != nil || n != 1 {
			t.Fatalf("repair on b: %d, %v", n, err)
		}
		if err := b.UpdateUsage(ctx, s.ID, m.Seq, loom.Usage{InputTokens: 9, OutputTokens: 2}); err != nil {
			t.Fatal(err)
		}
		exchange(t, a, b, ai, bi, bFirst)
		v := SameView(t, a, b, "README")
		got := v.Messages[s.ID][1]
		if p := got.Parts[0]; p.Status != loom.ToolCompleted || string(p.Output) != `"README.md"` {
			t.Fatalf("b first %v: the tool part is %s %s; want the result", bFirst, p.Status, p.Output)
		}
		if got.Usage.InputTokens != 9 || v.Sessions[0].Usage.InputTokens != 9 || v.Sessions[0].Usage.OutputTokens != 2 {
			t.Fatalf("b first %v: usage %+v, session %+v; want the later update's", bFirst, got.Usage, v.Sessions[0].Usage)
		}
	}
}

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
func testApplySyncImportsOfOneSource(t *testing.T, newStore Factory) {
	for _, order := range []string{"B grows, B applies first", "B grows, A applies first", "B applies, then grows"} {
		t.Run(order, func(t *testing.T) {
			ctx := context.Background()
			a, b := pair(t, newStore)
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
				ApplyAll(t, b, Pull(t, a, 0))
				ApplyAll(t, a, Pull(t, b, 0))
			case "B grows, A applies first":
				grow()
				ApplyAll(t, a, Pull(t, b, 0))
				ApplyAll(t, b, Pull(t, a, 0))
			default:
				ApplyAll(t, b, Pull(t, a, 0))
				if x, _ := b.Session(ctx, short.Session.ID); x.MessageCount != 10 {
					t.Fatalf("B holds %d messages after applying A's 10", x.MessageCount)
				}
				grow()
				ApplyAll(t, a, Pull(t, b, 0))
			}
			v := SameView(t, a, b, "okapi")
			if len(v.Sessions) != 1 {
				t.Fatalf("%d sessions, want 1:\n%s", len(v.Sessions), DumpSessions(v.Sessions))
			}
			s := v.Sessions[0]
			if msgs := v.Messages[s.ID]; len(msgs) != 12 || s.MessageCount != 12 || msgs[11].ID != "src-12" {
				t.Fatalf("the session holds %d messages (count %d):\n%s", len(msgs), s.MessageCount, DumpMessages(msgs))
			}
			if Searches(a) && len(v.Hits["okapi"]) != 12 {
				t.Fatalf("okapi found %d times, want 12:\n%s", len(v.Hits["okapi"]), DumpHits(v.Hits))
			}
			if want := int64(10 * 6); s.Usage.InputTokens != want || !s.UpdatedAt.Equal(sourceCopy(12).Messages[11].CreatedAt) {
				t.Errorf("input tokens %d, want %d; updated at %v", s.Usage.InputTokens, want, s.UpdatedAt)
			}
		})
	}
}
