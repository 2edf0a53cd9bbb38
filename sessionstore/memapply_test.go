package sessionstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/memstore"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// The rule tests of sqlite's syncapply_test.go, syncconflict_test.go,
// syncapply_lineage_test.go and syncapply_life_test.go, over stores in
// memory (internal/memstore): what applying another machine's records
// does, without a database. The engines' own tests keep them, and the
// searches these leave out.

// syncPair returns two stores with sync set up, as two machines' stores.
func syncPair(t *testing.T) (a, b *memstore.Store) {
	t.Helper()
	a, b = memstore.New(), memstore.New()
	for _, st := range []*memstore.Store{a, b} {
		if _, err := st.EnableSync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// pulled is a record of one store's log as another store applies it.
type pulled struct {
	h synclog.Header
	p synclog.Payload
}

// pull reads from's sync log after index after, decoded, with the headers
// its records travel under.
func pull(t *testing.T, from *memstore.Store, after int64) []pulled {
	t.Helper()
	host, err := from.SyncHost(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []pulled
	for _, r := range syncLog(t, from) {
		if r.Index > after {
			out = append(out, pulled{synclog.Header{Host: host, Index: r.Index, HLC: r.HLC, KeyID: "0123456789abcdef"}, r.p})
		}
	}
	return out
}

// applyAll applies recs to st, in order.
func applyAll(t *testing.T, st *memstore.Store, recs []pulled) {
	t.Helper()
	for _, r := range recs {
		if err := st.ApplySync(context.Background(), r.h, r.p); err != nil {
			t.Fatalf("apply %s (%s): %v", r.h, r.p.Type(), err)
		}
	}
}

// view is what a user sees of a store: every session (trashed, archived
// or not) with its messages. (The memory store has no search: the
// sqlite tests these are ported from compare searches too.)
type view struct {
	Sessions []*loom.Session
	Messages map[string][]*loom.Message
}

func viewOf(t *testing.T, st *memstore.Store) view {
	t.Helper()
	ctx := context.Background()
	v := view{Messages: map[string][]*loom.Message{}}
	for _, deleted := range []bool{false, true} {
		ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: "alice", Archived: loom.WithArchived, Deleted: deleted})
		if err != nil {
			t.Fatal(err)
		}
		v.Sessions = append(v.Sessions, ss...)
	}
	for _, s := range v.Sessions {
		msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		v.Messages[s.ID] = msgs
	}
	return v
}

// sameView fails unless a and b show the same sessions and messages.
func sameView(t *testing.T, a, b *memstore.Store) view {
	t.Helper()
	va, vb := viewOf(t, a), viewOf(t, b)
	if len(va.Sessions) == 0 {
		t.Fatal("the first store holds no sessions")
	}
	for i := range max(len(va.Sessions), len(vb.Sessions)) {
		if i >= len(va.Sessions) || i >= len(vb.Sessions) || !reflect.DeepEqual(va.Sessions[i], vb.Sessions[i]) {
			t.Fatalf("sessions differ:\n%s\n%s", dumpSessions(va.Sessions), dumpSessions(vb.Sessions))
		}
	}
	for id, msgs := range va.Messages {
		if !reflect.DeepEqual(msgs, vb.Messages[id]) {
			t.Fatalf("messages of %s differ:\n%s\n%s", id, dumpMessages(msgs), dumpMessages(vb.Messages[id]))
		}
	}
	return va
}

func dumpSessions(ss []*loom.Session) string {
	out := ""
	for _, s := range ss {
		out += mustJSON(s) + "\n"
	}
	return out
}

func dumpMessages(ms []*loom.Message) string {
	out := ""
	for _, m := range ms {
		out += mustJSON(m) + "\n"
	}
	return out
}

func say(t *testing.T, st *memstore.Store, s *loom.Session, role string, texts ...string) []*loom.Message {
	t.Helper()
	var msgs []*loom.Message
	for _, text := range texts {
		msgs = append(msgs, &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: text}}})
	}
	if err := st.Append(context.Background(), s, msgs...); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// Sessions made, messages appended and sessions imported on one machine
// read the same on another that applied its records: ids, seq, times,
// text, titles. Applying again changes nothing, and applying
// records nothing in the applying store's own log.
func TestMemApplySyncCopiesSessions(t *testing.T) {
	ctx := context.Background()
	a, b := syncPair(t)
	s := &loom.Session{UserID: "alice", Key: "cli:api"}
	say(t, a, s, loom.RoleUser, "how do zebras sleep")
	say(t, a, s, loom.RoleAssistant, "standing up, mostly")
	say(t, a, s, loom.RoleUser, "and giraffes", "too?")
	other := &loom.Session{UserID: "alice", Title: "notes", Project: loom.Project{ID: "p1", Name: "api", Root: "/src/api"}}
	say(t, a, other, loom.RoleUser, "remember the zebra")
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

	recs := pull(t, a, 0)
	applyAll(t, b, recs)
	want := sameView(t, a, b)
	if len(want.Sessions) != 3 {
		t.Fatalf("%d sessions, want 3", len(want.Sessions))
	}
	applyAll(t, b, recs)
	if got := viewOf(t, b); !reflect.DeepEqual(got, want) {
		t.Fatal("applying the records again changed the store")
	}
	if log := syncLog(t, b); len(log) != 0 {
		t.Fatalf("applying wrote %d records to the store's own log", len(log))
	}

	// B continues the session; A applies B's records and the two agree.
	cont := want.Sessions[0]
	if cont.ID != s.ID {
		cont, _ = b.Session(ctx, s.ID)
	}
	say(t, b, cont, loom.RoleAssistant, "giraffes sleep standing too")
	applyAll(t, a, pull(t, b, 0))
	sameView(t, a, b)
	if n := len(syncLog(t, a)); n != len(recs) {
		t.Fatalf("A's log holds %d records after applying B's, want its own %d", n, len(recs))
	}
}

// A record whose index skips one of its host's is refused, and so is one
// stamped hours ahead of this machine's clock; neither changes the store,
// and the records apply once what was missing arrives.
func TestMemApplySyncRefusesGapsAndClocksAhead(t *testing.T) {
	ctx := context.Background()
	a, b := syncPair(t)
	s := &loom.Session{UserID: "alice"}
	say(t, a, s, loom.RoleUser, "one")
	say(t, a, s, loom.RoleUser, "two")
	recs := pull(t, a, 0) // created, appended, appended
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	if err := b.ApplySync(ctx, recs[1].h, recs[1].p); !errors.Is(err, sessionstore.ErrGap) {
		t.Fatalf("applying record 2 first: %v, want sessionstore.ErrGap", err)
	}
	applyAll(t, b, recs[:1])
	if err := b.ApplySync(ctx, recs[2].h, recs[2].p); !errors.Is(err, sessionstore.ErrGap) {
		t.Fatalf("applying record 3 after 1: %v, want sessionstore.ErrGap", err)
	}
	ahead := recs[1]
	ahead.h.HLC = synclog.NewHLC(time.Now().Add(3*time.Hour), 0)
	if err := b.ApplySync(ctx, ahead.h, ahead.p); !errors.Is(err, synclog.ErrClockAhead) {
		t.Fatalf("a record 3 hours ahead: %v, want ErrClockAhead", err)
	}
	if msgs, err := b.Messages(ctx, s.ID, loom.MessageQuery{}); err != nil || len(msgs) != 0 {
		t.Fatalf("refused records left %d messages (%v)", len(msgs), err)
	}
	applyAll(t, b, recs[1:])
	sameView(t, a, b)
}

// Records this loom does not apply yet are refused by name, never
// skipped: the store's vector does not move past them.
func TestMemApplySyncRefusesWhatItCannotApply(t *testing.T) {
	ctx := context.Background()
	_, b := syncPair(t)
	h := synclog.Header{Host: synclog.NewHostID(), Index: 1, HLC: synclog.NewHLC(time.Now(), 0), KeyID: "0123456789abcdef"}
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

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// manualClock is one wall clock for several stores, moved by the test:
// changes made at different moments on different machines.
type manualClock struct{ at time.Time }

func (c *manualClock) now() time.Time { return c.at }

func (c *manualClock) tick() { c.at = c.at.Add(time.Second) }

func clockedPair(t *testing.T) (a, b *memstore.Store, c *manualClock) {
	t.Helper()
	c = &manualClock{at: time.Now().UTC().Truncate(time.Second)}
	a, b = syncPair(t)
	a.Now, b.Now = c.now, c.now
	return a, b, c
}

// exchange applies to each store the records of the other it has not
// applied, a's to b first; it returns the new positions in their logs.
func exchange(t *testing.T, a, b *memstore.Store, ai, bi int64, bFirst bool) (int64, int64) {
	t.Helper()
	ra, rb := pull(t, a, ai), pull(t, b, bi)
	if bFirst {
		applyAll(t, a, rb)
		applyAll(t, b, ra)
	} else {
		applyAll(t, b, ra)
		applyAll(t, a, rb)
	}
	if len(ra) > 0 {
		ai = ra[len(ra)-1].h.Index
	}
	if len(rb) > 0 {
		bi = rb[len(rb)-1].h.Index
	}
	return ai, bi
}

// Two machines change one session's metadata offline: each field ends
// with the latest write, on both, whichever applies first; an archive
// stamped after an append keeps the session archived though the append
// arrives after it.
func TestMemApplySyncMergesMetadata(t *testing.T) {
	ctx := context.Background()
	for _, bFirst := range []bool{false, true} {
		a, b, c := clockedPair(t)
		s := &loom.Session{UserID: "alice", Key: "cli:api", Title: "start"}
		say(t, a, s, loom.RoleUser, "hello")
		ai, bi := exchange(t, a, b, 0, 0, bFirst)

		rename := func(st *memstore.Store, u loom.SessionUpdate) {
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
		got := sameView(t, a, b).Sessions[0]
		if got.Title != "login" || got.Description != "from the laptop" || got.Model != "opus" || got.Cwd != "/src/api" {
			t.Fatalf("b first %v: merged %q %q %q %q; want login, from the laptop, opus, /src/api",
				bFirst, got.Title, got.Description, got.Model, got.Cwd)
		}

		// B appends, then A archives without having seen the append.
		c.tick()
		cur, _ := b.Session(ctx, s.ID)
		say(t, b, cur, loom.RoleAssistant, "hi")
		yes := true
		rename(a, loom.SessionUpdate{Archived: &yes})
		exchange(t, a, b, ai, bi, bFirst)
		if got := sameView(t, a, b).Sessions[0]; got.ArchivedAt == nil || got.MessageCount != 2 {
			t.Fatalf("b first %v: archived %v with %d messages; want archived with 2", bFirst, got.ArchivedAt, got.MessageCount)
		}
	}
}

// A tool's result wins over another machine's later "interrupted", and
// the latest usage update wins, on both machines whatever the order.
func TestMemApplySyncMergesPartsAndUsage(t *testing.T) {
	ctx := context.Background()
	for _, bFirst := range []bool{false, true} {
		a, b, c := clockedPair(t)
		s := &loom.Session{UserID: "alice"}
		say(t, a, s, loom.RoleUser, "list files")
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
		v := sameView(t, a, b)
		got := v.Messages[s.ID][1]
		if p := got.Parts[0]; p.Status != loom.ToolCompleted || string(p.Output) != `"README.md"` {
			t.Fatalf("b first %v: the tool part is %s %s; want the result", bFirst, p.Status, p.Output)
		}
		if got.Usage.InputTokens != 9 || v.Sessions[0].Usage.InputTokens != 9 || v.Sessions[0].Usage.OutputTokens != 2 {
			t.Fatalf("b first %v: usage %+v, session %+v; want the later update's", bFirst, got.Usage, v.Sessions[0].Usage)
		}
	}
}

// syncedSession returns two stores on one clock that both hold a session
// titled "plan" of one message, and the positions in their logs
// exchange returned.
func syncedSession(t *testing.T, bFirst bool) (a, b *memstore.Store, c *manualClock, s *loom.Session, ai, bi int64) {
	t.Helper()
	a, b, c = clockedPair(t)
	s = &loom.Session{UserID: "alice", Title: "plan"}
	say(t, a, s, loom.RoleUser, "hello zebra")
	ai, bi = exchange(t, a, b, 0, 0, bFirst)
	return a, b, c, s, ai, bi
}

// trashedOn returns whether session id is in st's trash.
func trashedOn(t *testing.T, st *memstore.Store, id string) bool {
	t.Helper()
	x, err := st.Session(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return x.DeletedAt != nil
}

type logRecord struct {
	synclog.LogRecord
	p synclog.Payload
}

// syncLog reads and decodes st's whole sync log.
func syncLog(t *testing.T, st *memstore.Store) []logRecord {
	t.Helper()
	recs, err := st.SyncLog(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]logRecord, len(recs))
	for i, r := range recs {
		p, err := synclog.Decode(r.Payload)
		if err != nil {
			t.Fatalf("record %d: %v", r.Index, err)
		}
		out[i] = logRecord{r, p}
	}
	return out
}
