// Package synctest is the suite of sync rule tests every engine that
// serves sessionstore's sync rules runs: what a store records in its sync
// log, and what applying another machine's records does to it (conflict
// forks, concurrent appends converging, key clashes, forks and rewinds,
// trash, restore, purge and its rescue, a new host id, and every kind of
// record through the codec, applying and the redaction of `secrets
// redact`, which fails for a new kind until it is looked at). The rules are
// sessionstore's, once; the suite runs them over SQLite (package sqlite's
// tests) and over the engine in memory (internal/memstore, in
// sessionstore's tests), so a rule broken fails on both. An engine's
// tests call Run with a Factory of fresh stores. RunConcurrent runs the
// table of machines acting on one session at once (docs/sync.md) over
// machines that sync through a hub the caller passes: syncrun's tests
// pass syncrun.Sync and a real hub, sessionstore's a hub in memory.
//
// Where a store also searches, the suite compares what the searches of
// both machines find too; the engine in memory has no search, and its
// Search says so (errors.ErrUnsupported).
package synctest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// Store is what the rule tests ask of a store: sessionstore's writes and
// sync steps, and the reads sqlite.Store has by these names.
type Store interface {
	Append(ctx context.Context, x *loom.Session, msgs ...*loom.Message) error
	Import(ctx context.Context, data []*loom.SessionData) error
	ApplyImport(ctx context.Context, w *loom.ImportWrite) error
	UpdatePart(ctx context.Context, sessionID string, seq int64, part loom.Part) error
	UpdateUsage(ctx context.Context, sessionID string, seq int64, u loom.Usage) error
	RepairInterrupted(ctx context.Context, sessionID string) (int, error)
	UpdateSession(ctx context.Context, id string, u loom.SessionUpdate) (*loom.Session, error)
	Fork(ctx context.Context, id string, opts loom.ForkOptions) (*loom.Session, error)
	Rewind(ctx context.Context, id string, opts loom.RewindOptions) (*loom.Session, error)
	Delete(ctx context.Context, id string, opts loom.DeleteOptions) ([]*loom.Session, error)
	Restore(ctx context.Context, id string) error
	Prune(ctx context.Context, opts loom.PruneOptions) (*loom.PruneResult, error)

	Session(ctx context.Context, id string) (*loom.Session, error)
	Sessions(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error)
	Messages(ctx context.Context, sessionID string, q loom.MessageQuery) ([]*loom.Message, error)

	EnableSync(ctx context.Context) (synclog.HostID, error)
	ApplySync(ctx context.Context, h synclog.Header, p synclog.Payload) error
	SyncRehome(ctx context.Context, from synclog.HostID, shared int64, junk bool) (sessionstore.HostMove, error)
	SyncHost(ctx context.Context) (synclog.HostID, error)
	SyncLog(ctx context.Context, after int64, limit int) ([]synclog.LogRecord, error)
	SyncLast(ctx context.Context) (int64, error)
	SyncApplied(ctx context.Context) (synclog.Vector, error)
	SyncRetired(ctx context.Context) (map[synclog.HostID]int64, error)
	SyncConflicts(ctx context.Context) ([]sessionstore.Conflict, error)
	SyncForgetPurged(ctx context.Context, upTo int64) (int, error)

	// Search searches the store's messages, or returns an error in
	// whose chain is errors.ErrUnsupported for a store that keeps no
	// search index (the engine in memory): where both machines' stores
	// search, the suite compares what they find too.
	Search(ctx context.Context, q loom.SearchQuery) ([]loom.SearchHit, error)
}

// Factory returns a new empty store of the engine under test, without
// sync set up, cleaned up with t, whose clock is now: loom.Now, or a
// clock the test moves that several machines share.
type Factory func(t *testing.T, now func() time.Time) Store

// Run runs every rule test over stores newStore makes.
func Run(t *testing.T, newStore Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, newStore Factory)
	}{
		{"ApplySyncCopiesSessions", testApplySyncCopiesSessions},
		{"ApplySyncRefusesGapsAndClocksAhead", testApplySyncRefusesGapsAndClocksAhead},
		{"ApplySyncRefusesWhatItCannotApply", testApplySyncRefusesWhatItCannotApply},
		{"ApplySyncMergesMetadata", testApplySyncMergesMetadata},
		{"ApplySyncMergesPartsAndUsage", testApplySyncMergesPartsAndUsage},
		{"ApplySyncImportsOfOneSource", testApplySyncImportsOfOneSource},
		{"ApplySyncConflictFork", testApplySyncConflictFork},
		{"ApplySyncConcurrentAppendsConverge", testApplySyncConcurrentAppendsConverge},
		{"ApplySyncKeyClash", testApplySyncKeyClash},
		{"ApplySyncKeyLetGoBeforeArrival", testApplySyncKeyLetGoBeforeArrival},
		{"ApplySyncForks", testApplySyncForks},
		{"ApplySyncRewinds", testApplySyncRewinds},
		{"ApplySyncTrashAndRestore", testApplySyncTrashAndRestore},
		{"ApplySyncPurgeRescues", testApplySyncPurgeRescues},
		{"ApplySyncPurgeDropsLaterChanges", testApplySyncPurgeDropsLaterChanges},
		{"ApplySyncPurgeSeenNoCopy", testApplySyncPurgeSeenNoCopy},
		{"SyncLogRecordsEveryChange", testSyncLogRecordsEveryChange},
		{"EnableSyncSplitsLargeHistory", testEnableSyncSplitsLargeHistory},
		{"SyncLogRecordsDescriptionIfEmpty", testSyncLogRecordsDescriptionIfEmpty},
		{"EnableSyncRecordsHistory", testEnableSyncRecordsHistory},
		{"ApplyLongHistoryKeepsUsage", testApplyLongHistoryKeepsUsage},
		{"SyncRehome", testSyncRehome},
		{"EveryRecordKind", testEveryRecordKind},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore) })
	}
}

// Synced returns a new store of f with sync set up, on clock now.
func Synced(t *testing.T, f Factory, now func() time.Time) Store {
	t.Helper()
	st := f(t, now)
	if _, err := st.EnableSync(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

// pair returns two stores with sync set up, as two machines' stores.
func pair(t *testing.T, f Factory) (a, b Store) {
	t.Helper()
	return Synced(t, f, loom.Now), Synced(t, f, loom.Now)
}

// Pulled is a record of one store's log as another store applies it.
type Pulled struct {
	Header  synclog.Header
	Payload synclog.Payload
}

// KeyID is the key id the suite's records travel under.
const KeyID = "0123456789abcdef"

// Pull reads from's sync log after index after, decoded, with the headers
// its records travel under.
func Pull(t *testing.T, from Store, after int64) []Pulled {
	t.Helper()
	host, err := from.SyncHost(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []Pulled
	for _, r := range SyncLog(t, from) {
		if r.Index > after {
			out = append(out, Pulled{synclog.Header{Host: host, Index: r.Index, HLC: r.HLC, KeyID: KeyID}, r.Decoded})
		}
	}
	return out
}

// ApplyAll applies recs to st, in order.
func ApplyAll(t *testing.T, st Store, recs []Pulled) {
	t.Helper()
	for _, r := range recs {
		if err := st.ApplySync(context.Background(), r.Header, r.Payload); err != nil {
			t.Fatalf("apply %s (%s): %v", r.Header, r.Payload.Type(), err)
		}
	}
}

// Logged is a record of a store's own sync log, decoded.
type Logged struct {
	synclog.LogRecord
	Decoded synclog.Payload
}

// SyncLog reads and decodes st's whole sync log.
func SyncLog(t *testing.T, st Store) []Logged {
	t.Helper()
	recs, err := st.SyncLog(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Logged, len(recs))
	for i, r := range recs {
		p, err := synclog.Decode(r.Payload)
		if err != nil {
			t.Fatalf("record %d: %v", r.Index, err)
		}
		out[i] = Logged{r, p}
	}
	return out
}

// Say appends a message of role to s on st for each of texts, each its
// own message, and returns them.
func Say(t *testing.T, st Store, s *loom.Session, role string, texts ...string) []*loom.Message {
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

// View is what a user sees of a store: every session (trashed, archived
// or not) with its messages, and, of a store that searches, what
// searches for words find.
type View struct {
	Sessions []*loom.Session
	Messages map[string][]*loom.Message
	Hits     map[string][]loom.SearchHit
}

// ViewOf returns what a user sees of st, searching for words where st
// searches.
func ViewOf(t *testing.T, st Store, words ...string) View {
	t.Helper()
	ctx := context.Background()
	v := View{Messages: map[string][]*loom.Message{}, Hits: map[string][]loom.SearchHit{}}
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
	if Searches(st) {
		for _, w := range words {
			hits, err := st.Search(ctx, loom.SearchQuery{Text: w, UserID: "alice", Archived: true, Limit: 500})
			if err != nil {
				t.Fatal(err)
			}
			v.Hits[w] = hits
		}
	}
	return v
}

// Searches reports whether st searches (the suite then checks its hits).
func Searches(st Store) bool {
	_, err := st.Search(context.Background(), loom.SearchQuery{Text: "searches", UserID: "alice", Limit: 1})
	return !errors.Is(err, errors.ErrUnsupported)
}

// SameView fails unless a and b show the same sessions, messages and
// search results (of words, where they search).
func SameView(t *testing.T, a, b Store, words ...string) View {
	t.Helper()
	va, vb := ViewOf(t, a, words...), ViewOf(t, b, words...)
	if len(va.Sessions) == 0 {
		t.Fatal("the first store holds no sessions")
	}
	for i := range max(len(va.Sessions), len(vb.Sessions)) {
		if i >= len(va.Sessions) || i >= len(vb.Sessions) || !reflect.DeepEqual(va.Sessions[i], vb.Sessions[i]) {
			t.Fatalf("sessions differ:\n%s\n%s", DumpSessions(va.Sessions), DumpSessions(vb.Sessions))
		}
	}
	for id, msgs := range va.Messages {
		if !reflect.DeepEqual(msgs, vb.Messages[id]) {
			t.Fatalf("messages of %s differ:\n%s\n%s", id, DumpMessages(msgs), DumpMessages(vb.Messages[id]))
		}
	}
	// Hits of the same score and time may come in another order on each
	// machine (docs/sync.md): the same hits, in the same order otherwise.
	for _, v := range []View{va, vb} {
		for _, hits := range v.Hits {
			for i := 0; i < len(hits); {
				j := i + 1
				for j < len(hits) && hits[j].Score == hits[i].Score && hits[j].CreatedAt.Equal(hits[i].CreatedAt) {
					j++
				}
				slices.SortFunc(hits[i:j], func(x, y loom.SearchHit) int {
					return cmp.Or(cmp.Compare(x.SessionID, y.SessionID), cmp.Compare(x.MessageID, y.MessageID))
				})
				i = j
			}
		}
	}
	if !reflect.DeepEqual(va.Hits, vb.Hits) {
		t.Fatalf("search results differ:\n%s\n%s", DumpHits(va.Hits), DumpHits(vb.Hits))
	}
	return va
}

// DumpSessions returns ss as JSON, a session a line.
func DumpSessions(ss []*loom.Session) string {
	out := ""
	for _, s := range ss {
		out += mustJSON(s) + "\n"
	}
	return out
}

// DumpMessages returns ms as JSON, a message a line.
func DumpMessages(ms []*loom.Message) string {
	out := ""
	for _, m := range ms {
		out += mustJSON(m) + "\n"
	}
	return out
}

// DumpHits returns the hits of each word, a hit a line.
func DumpHits(hits map[string][]loom.SearchHit) string {
	out := ""
	for w, hs := range hits {
		for _, h := range hs {
			out += fmt.Sprintf("%s: %s %s %d %g %s %q\n", w, h.SessionID, h.MessageID, h.Seq, h.Score, h.CreatedAt.Format(time.RFC3339Nano), h.SessionTitle)
		}
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// texts returns the text of each message, in order.
func texts(msgs []*loom.Message) string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Text()
	}
	return strings.Join(out, " ")
}

// manualClock is one wall clock for several stores, moved by the test:
// changes made at different moments on different machines.
type manualClock struct{ at time.Time }

func (c *manualClock) now() time.Time { return c.at }

func (c *manualClock) tick() { c.at = c.at.Add(time.Second) }

// clockedPair returns two stores with sync set up on one clock the test
// moves.
func clockedPair(t *testing.T, f Factory) (a, b Store, c *manualClock) {
	t.Helper()
	c = &manualClock{at: time.Now().UTC().Truncate(time.Second)}
	return Synced(t, f, c.now), Synced(t, f, c.now), c
}

// exchange applies to each store the records of the other it has not
// applied, a's to b first; it returns the new positions in their logs.
func exchange(t *testing.T, a, b Store, ai, bi int64, bFirst bool) (int64, int64) {
	t.Helper()
	ra, rb := Pull(t, a, ai), Pull(t, b, bi)
	if bFirst {
		ApplyAll(t, a, rb)
		ApplyAll(t, b, ra)
	} else {
		ApplyAll(t, b, ra)
		ApplyAll(t, a, rb)
	}
	if len(ra) > 0 {
		ai = ra[len(ra)-1].Header.Index
	}
	if len(rb) > 0 {
		bi = rb[len(rb)-1].Header.Index
	}
	return ai, bi
}

// syncedSession returns two stores on one clock that both hold a session
// titled "plan" of one message, and the positions in their logs
// exchange returned.
func syncedSession(t *testing.T, f Factory, bFirst bool) (a, b Store, c *manualClock, s *loom.Session, ai, bi int64) {
	t.Helper()
	a, b, c = clockedPair(t, f)
	s = &loom.Session{UserID: "alice", Title: "plan"}
	Say(t, a, s, loom.RoleUser, "hello zebra")
	ai, bi = exchange(t, a, b, 0, 0, bFirst)
	return a, b, c, s, ai, bi
}

// trashedOn returns whether session id is in st's trash.
func trashedOn(t *testing.T, st Store, id string) bool {
	t.Helper()
	x, err := st.Session(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return x.DeletedAt != nil
}
