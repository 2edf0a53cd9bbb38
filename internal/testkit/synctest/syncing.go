package synctest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/workload"
	"github.com/loomhq/loom/synclog"
)

// Once sync is set up, every change the store makes is a record of its
// sync log, in the same transaction, numbered without gaps and stamped
// in order; before, and when a change is refused, nothing is recorded.
func testSyncLogRecordsEveryChange(t *testing.T, newStore Factory) {
	ctx := context.Background()
	st := newStore(t, loom.Now)
	before := &loom.Session{UserID: "alice", Key: "cli:before"}
	Say(t, st, before, loom.RoleUser, "not recorded")
	if log := SyncLog(t, st); len(log) != 0 {
		t.Fatalf("a store without sync recorded %d changes", len(log))
	}
	host, err := st.EnableSync(ctx)
	if err != nil || host.Validate() != nil {
		t.Fatalf("enable sync: %q, %v", host, err)
	}
	if again, err := st.EnableSync(ctx); err != nil || again != host {
		t.Fatalf("enabling again: %q, %v; want the same host %q", again, err, host)
	}

	s := &loom.Session{UserID: "alice", Key: "cli:api", Title: "plan"}
	q1 := Say(t, st, s, loom.RoleUser, "first question")[0]
	call := loom.Part{Type: loom.PartTool, CallID: "c1", Name: "bash", Status: loom.ToolRunning, Input: json.RawMessage(`{"cmd":"ls"}`)}
	a1 := &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{call}}
	if err := st.Append(ctx, s, a1); err != nil {
		t.Fatal(err)
	}
	call = a1.Parts[0]
	call.Status, call.Output = loom.ToolCompleted, json.RawMessage(`"a b"`)
	if err := st.UpdatePart(ctx, s.ID, a1.Seq, call); err != nil {
		t.Fatal(err)
	}
	if err := st.UpdateUsage(ctx, s.ID, a1.Seq, loom.Usage{InputTokens: 7}); err != nil {
		t.Fatal(err)
	}
	q2 := Say(t, st, s, loom.RoleUser, "second question")[0]
	Say(t, st, s, loom.RoleAssistant, "second answer")
	title, archived := "  the plan ", true
	if _, err := st.UpdateSession(ctx, s.ID, loom.SessionUpdate{Title: &title, Archived: &archived}); err != nil {
		t.Fatal(err)
	}
	fork, err := st.Fork(ctx, s.ID, loom.ForkOptions{Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	rewound, err := st.Rewind(ctx, s.ID, loom.RewindOptions{Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Delete(ctx, fork.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Restore(ctx, fork.ID); err != nil {
		t.Fatal(err)
	}
	refusedChangesAndPurge(t, ctx, st, s, fork)
	now := time.Now().UTC().Truncate(time.Millisecond)
	imp := &loom.SessionData{Session: &loom.Session{ID: loom.NewID(), UserID: "alice", Kind: loom.KindMain, CreatedAt: now, UpdatedAt: now},
		Messages: []*loom.Message{{ID: loom.NewID(), Seq: 1, Role: loom.RoleUser, CreatedAt: now, Parts: []loom.Part{{ID: "p1", Type: loom.PartText, Text: "imported"}}}}}
	if err := st.Import(ctx, []*loom.SessionData{imp}); err != nil {
		t.Fatal(err)
	}

	log := recordedTypes(t, st, before)

	checkRecorded(t, log, host, s, fork, rewound, imp, q1, q2, a1)
}

func refusedChangesAndPurge(t *testing.T, ctx context.Context, st Store, s, fork *loom.Session) {
	// Refused changes record nothing: a fork at a turn the session does
	// not have, a rename to two lines.
	if _, err := st.Fork(ctx, s.ID, loom.ForkOptions{Turn: 9}); loom.ErrorCode(err) != loom.EINVALID {
		t.Fatalf("fork at turn 9: %v", err)
	}
	bad := "two\nlines"
	if _, err := st.UpdateSession(ctx, s.ID, loom.SessionUpdate{Title: &bad}); loom.ErrorCode(err) != loom.EINVALID {
		t.Fatalf("rename to two lines: %v", err)
	}
	if _, err := st.Delete(ctx, fork.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
}

// recordedTypes: the log's first record imports the session made before
// sync was set up; the others, returned, are one of each change, in order,
// without a gap.
func recordedTypes(t *testing.T, st Store, before *loom.Session) []Logged {
	log := SyncLog(t, st)
	// The session made before sync was set up is the log's first record.
	if p, ok := log[0].Decoded.(*synclog.Imported); !ok || p.Sessions[0].Session.ID != before.ID || len(p.Sessions[0].Messages) != 1 {
		t.Fatalf("first record = %#v, want the import of the session made before", log[0].Decoded)
	}
	log = log[1:]
	want := []synclog.Type{synclog.TypeSessionCreated, synclog.TypeMessagesAppended, synclog.TypeMessagesAppended,
		synclog.TypePartUpdated, synclog.TypeUsageUpdated, synclog.TypeMessagesAppended, synclog.TypeMessagesAppended,
		synclog.TypeSessionChanged, synclog.TypeForked, synclog.TypeRewound, synclog.TypeTrashed, synclog.TypeRestored,
		synclog.TypePurged, synclog.TypeImported}
	var got []synclog.Type
	for i, r := range log {
		got = append(got, r.Decoded.Type())
		if r.Index != int64(i+2) {
			t.Fatalf("record %d has index %d: the log has a gap", i+1, r.Index)
		}
		if i > 0 && r.HLC <= log[i-1].HLC {
			t.Fatalf("record %d is stamped %s, not after %s", r.Index, r.HLC, log[i-1].HLC)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("records:\n got %v\nwant %v", got, want)
	}
	return log
}

// checkRecorded: each record of testSyncLogRecordsEveryChange's changes
// says what the change did.
func checkRecorded(t *testing.T, log []Logged, host synclog.HostID, s, fork, rewound *loom.Session, imp *loom.SessionData, q1, q2, a1 *loom.Message) {
	created := log[0].Decoded.(*synclog.SessionCreated)
	if created.Session.ID != s.ID || created.Session.Title != "plan" || created.Session.Key != "cli:api" {
		t.Errorf("session created = %+v", created.Session)
	}
	first, third := log[1].Decoded.(*synclog.MessagesAppended), log[5].Decoded.(*synclog.MessagesAppended)
	if first.FirstSeq != 1 || first.PrevID != "" || first.Messages[0].ID != q1.ID || first.At.IsZero() {
		t.Errorf("first append = %+v", first)
	}
	if third.FirstSeq != 3 || third.PrevID != a1.ID || third.Messages[0].ID != q2.ID {
		t.Errorf("third append = first seq %d after %q, want 3 after %q", third.FirstSeq, third.PrevID, a1.ID)
	}
	if p := log[3].Decoded.(*synclog.PartUpdated); p.MessageID != a1.ID || p.Part.Status != loom.ToolCompleted {
		t.Errorf("part updated = %+v", p)
	}
	if p := log[4].Decoded.(*synclog.UsageUpdated); p.MessageID != a1.ID || p.Usage.InputTokens != 7 {
		t.Errorf("usage updated = %+v", p)
	}
	checkRecordedLifecycle(t, log, host, s, fork, rewound, imp, a1)
}

// checkRecordedLifecycle: the records of the rename, fork, rewind, trash,
// purge and import say what each did.
func checkRecordedLifecycle(t *testing.T, log []Logged, host synclog.HostID, s, fork, rewound *loom.Session, imp *loom.SessionData, a1 *loom.Message) {
	if p := log[7].Decoded.(*synclog.SessionChanged); p.Title == nil || *p.Title != "the plan" || p.Archive == nil || p.Archive.At == nil || p.At == nil {
		t.Errorf("session changed = %+v", p)
	}
	if p := log[8].Decoded.(*synclog.Forked); p.Session.ID != fork.ID || p.LastSeq != 2 || p.LastID != a1.ID {
		t.Errorf("forked = last seq %d, last id %q; want 2, %q", p.LastSeq, p.LastID, a1.ID)
	}
	if p := log[9].Decoded.(*synclog.Rewound); p.SessionID != s.ID || p.Fork.ID != rewound.ID || p.KeepSeq != 2 || p.KeepID != a1.ID || p.Store == "" {
		t.Errorf("rewound = %+v", p)
	}
	trashed := log[10].Decoded.(*synclog.Trashed)
	if !reflect.DeepEqual(trashed.SessionIDs, []string{fork.ID}) || trashed.Seen[host] != 11 {
		t.Errorf("trashed = %+v; want the fork, having seen this host's 11 records", trashed)
	}
	if p := log[12].Decoded.(*synclog.Purged); !reflect.DeepEqual(p.SessionIDs, []string{fork.ID}) {
		t.Errorf("purged = %+v", p)
	}
	if p := log[13].Decoded.(*synclog.Imported); len(p.Sessions) != 1 || p.Sessions[0].Session.ID != imp.Session.ID || len(p.Sessions[0].Messages) != 1 {
		t.Errorf("imported = %+v", p)
	}
}

// A description set only where it is empty (DescriptionIfEmpty) is
// recorded for sync as it is stored: where the session had one, the
// record leaves it out, and a change of nothing else records nothing, so
// no other machine receives the summary over the user's words.
func testSyncLogRecordsDescriptionIfEmpty(t *testing.T, newStore Factory) {
	ctx := context.Background()
	st := newStore(t, loom.Now)
	if _, err := st.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	s := &loom.Session{UserID: "alice", Key: "cli:api", Title: "plan"}
	Say(t, st, s, loom.RoleUser, "a question")
	describe := func(u loom.SessionUpdate) []Logged {
		t.Helper()
		n := len(SyncLog(t, st))
		if _, err := st.UpdateSession(ctx, s.ID, u); err != nil {
			t.Fatal(err)
		}
		return SyncLog(t, st)[n:]
	}
	summary, mine, title := "a summary", "mine", "renamed"
	added := describe(loom.SessionUpdate{Description: &summary, DescriptionIfEmpty: true, KeepUpdatedAt: true})
	if len(added) != 1 {
		t.Fatalf("a summary where there was none: %d records, want 1", len(added))
	}
	if p, ok := added[0].Decoded.(*synclog.SessionChanged); !ok || p.Description == nil || *p.Description != summary || p.At != nil {
		t.Fatalf("a summary where there was none: %+v", added[0].Decoded)
	}
	describe(loom.SessionUpdate{Description: &mine})
	if added := describe(loom.SessionUpdate{Description: &summary, DescriptionIfEmpty: true, KeepUpdatedAt: true}); len(added) != 0 {
		t.Fatalf("a summary over the user's description recorded %+v", added[0].Decoded)
	}
	added = describe(loom.SessionUpdate{Description: &summary, DescriptionIfEmpty: true, Title: &title})
	if len(added) != 1 {
		t.Fatalf("a summary over the user's description with a new title: %d records, want 1", len(added))
	}
	if p, ok := added[0].Decoded.(*synclog.SessionChanged); !ok || p.Description != nil || p.Title == nil || *p.Title != title {
		t.Fatalf("a summary over the user's description with a new title: %+v", added[0].Decoded)
	}
}

// Setting sync up records what the store held: each session as an
// import of it as it is (a fork whole, the trashed and archived ones
// too), a long one's messages a thousand at a time.
func testEnableSyncRecordsHistory(t *testing.T, newStore Factory) {
	ctx := context.Background()
	st := newStore(t, loom.Now)
	now := time.Now().UTC().Truncate(time.Millisecond)
	long := &loom.SessionData{Session: &loom.Session{ID: loom.NewID(), UserID: "alice", Kind: loom.KindMain, Title: "long", CreatedAt: now, UpdatedAt: now}}
	for i := range 2500 {
		long.Messages = append(long.Messages, workload.Message(i, fmt.Sprintf("message %d", i+1), now))
	}
	if err := st.Import(ctx, []*loom.SessionData{long}); err != nil {
		t.Fatal(err)
	}
	fork, err := st.Fork(ctx, long.Session.ID, loom.ForkOptions{Turn: 2})
	if err != nil {
		t.Fatal(err)
	}
	gone := &loom.Session{UserID: "alice", Key: "cli:gone"}
	if err := st.Append(ctx, gone, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "bye"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Delete(ctx, gone.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateSession(ctx, long.Session.ID, loom.SessionUpdate{Archived: new(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	got, rows, records, rearchived := replayHistory(t, st, long.Session.ID)
	if len(got[long.Session.ID]) != 2500 || got[long.Session.ID][2499].Parts[0].Text != "message 2500" || records[long.Session.ID] != 3 {
		t.Errorf("the long session's history holds %d messages in %d records", len(got[long.Session.ID]), records[long.Session.ID])
	}
	if rows[long.Session.ID].ArchivedAt == nil || !rearchived {
		t.Errorf("the archived long session is not recorded archived after its appends (archived %v, again %v)", rows[long.Session.ID].ArchivedAt, rearchived)
	}
	// Applied on another machine, it stays archived.
	other := newStore(t, loom.Now)
	if _, err := other.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	ApplyAll(t, other, Pull(t, st, 0))
	if s, err := other.Session(ctx, long.Session.ID); err != nil || s.ArchivedAt == nil || s.MessageCount != 2500 {
		t.Errorf("the long session on another machine: %v, %v", s, err)
	}
	if f := got[fork.ID]; len(f) != 4 || f[0].ID != long.Messages[0].ID || rows[fork.ID].ParentID != long.Session.ID {
		t.Errorf("the fork's history = %d messages, parent %q", len(f), rows[fork.ID].ParentID)
	}
	if rows[gone.ID] == nil || rows[gone.ID].DeletedAt == nil {
		t.Errorf("the trashed session is not recorded in the trash: %+v", rows[gone.ID])
	}
}

// replayHistory reads st's log of history as imports and appends: the
// messages and rows of each session, how many records each took, and
// whether the session longID was archived again after its appends.
func replayHistory(t *testing.T, st Store, longID string) (got map[string][]*loom.Message, rows map[string]*loom.Session, records map[string]int, rearchived bool) {
	got, rows, records = map[string][]*loom.Message{}, map[string]*loom.Session{}, map[string]int{}
	for _, r := range SyncLog(t, st) {
		switch p := r.Decoded.(type) {
		case *synclog.Imported:
			rows[p.Sessions[0].Session.ID] = p.Sessions[0].Session
			got[p.Sessions[0].Session.ID] = p.Sessions[0].Messages
			records[p.Sessions[0].Session.ID]++
		case *synclog.MessagesAppended:
			prev := got[p.SessionID]
			if n := len(prev); n == 0 || prev[n-1].ID != p.PrevID || p.FirstSeq != int64(n+1) {
				t.Fatalf("append to %s at %d after %q does not follow the %d messages before", p.SessionID, p.FirstSeq, p.PrevID, n)
			}
			if len(p.Messages) > 1000 {
				t.Errorf("a record of %d messages, over a thousand", len(p.Messages))
			}
			got[p.SessionID] = append(prev, p.Messages...)
			records[p.SessionID]++
		case *synclog.SessionChanged:
			// The archived long session is archived again after the
			// appends of its later chunks, which unarchive it.
			rearchived = p.SessionID == longID && p.Archive != nil && p.Archive.At != nil && records[p.SessionID] == 3
		default:
			t.Fatalf("record %d is %s, want imports and appends", r.Index, p.Type())
		}
	}
	return got, rows, records, rearchived
}

// A long session's history comes in several records: applied, it has
// the usage it has on the machine it came from, not its later chunks'
// twice; so has one imported after sync was set up.
func testApplyLongHistoryKeepsUsage(t *testing.T, newStore Factory) {
	ctx := context.Background()
	a, b := newStore(t, loom.Now), newStore(t, loom.Now)
	long := func(n int) *loom.SessionData {
		now := time.Now().UTC().Truncate(time.Millisecond)
		d := &loom.SessionData{Session: &loom.Session{ID: loom.NewID(), UserID: "alice", Kind: loom.KindMain, CreatedAt: now, UpdatedAt: now}}
		for i := range n {
			d.Messages = append(d.Messages, &loom.Message{ID: loom.NewID(), Seq: int64(i + 1), Role: loom.RoleAssistant, CreatedAt: now,
				Usage: loom.Usage{InputTokens: 1, CostUSD: 0.001}, Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "x"}}})
		}
		d.Session.Usage = loom.Usage{InputTokens: int64(n), CostUSD: 0.001 * float64(n)}
		return d
	}
	before, after := long(2500), long(1500)
	if err := a.Import(ctx, []*loom.SessionData{before}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Import(ctx, []*loom.SessionData{after}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	ApplyAll(t, b, Pull(t, a, 0))
	for _, id := range []string{before.Session.ID, after.Session.ID} {
		x, err := a.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if x.Usage.InputTokens != y.Usage.InputTokens || x.MessageCount != y.MessageCount {
			t.Errorf("session of %d messages: %d tokens here, %d on the machine it came from", x.MessageCount, y.Usage.InputTokens, x.Usage.InputTokens)
		}
	}
}

// A session of large messages is recorded in records of about
// sessionstore.RecordBytes of content each, however few its messages, so
// that no record is larger than a hub takes.
func testEnableSyncSplitsLargeHistory(t *testing.T, newStore Factory) {
	ctx := context.Background()
	st := newStore(t, loom.Now)
	now := time.Now().UTC().Truncate(time.Millisecond)
	big := &loom.SessionData{Session: &loom.Session{ID: loom.NewID(), UserID: "alice", Kind: loom.KindMain, Title: "big", CreatedAt: now, UpdatedAt: now}}
	for i := range 10 {
		big.Messages = append(big.Messages, &loom.Message{ID: loom.NewID(), Seq: int64(i + 1), Role: loom.RoleUser, CreatedAt: now,
			Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: fmt.Sprintf("%d %s", i, strings.Repeat("x", 1<<20))}}})
	}
	if err := st.Import(ctx, []*loom.SessionData{big}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, r := range SyncLog(t, st) {
		switch p := r.Decoded.(type) {
		case *synclog.Imported:
			sizes = append(sizes, len(p.Sessions[0].Messages))
		case *synclog.MessagesAppended:
			sizes = append(sizes, len(p.Messages))
		}
	}
	if !slices.Equal(sizes, []int{3, 3, 3, 1}) {
		t.Errorf("records of %v messages, want 3, 3, 3, 1", sizes)
	}
	other := newStore(t, loom.Now)
	if _, err := other.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	ApplyAll(t, other, Pull(t, st, 0))
	msgs, err := other.Messages(ctx, big.Session.ID, loom.MessageQuery{})
	if err != nil || len(msgs) != 10 || !strings.HasPrefix(msgs[9].Text(), "9 ") {
		t.Errorf("another machine holds %d messages, %v", len(msgs), err)
	}
}

// A store whose log parts from the hub's after its first records takes
// a new host: the records after them are the new host's first, the same
// changes with the same stamps, a trash's view of the old host past the
// parting moved to the new; the old host counts as applied up to the
// parting; changes made later are the new host's; and a second rehome
// from the old host does nothing.
func testSyncRehome(t *testing.T, newStore Factory) {
	ctx := context.Background()
	st, _ := pair(t, newStore)
	old, err := st.SyncHost(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hi := func(key string) *loom.Session {
		t.Helper()
		s := &loom.Session{UserID: "alice", Key: key}
		if err := st.Append(ctx, s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "hi"}}}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	hi("cli:one") // records 1, 2
	s := hi("cli:two")
	if _, err := st.Delete(ctx, s.ID, loom.DeleteOptions{}); err != nil { // record 5, having seen 4
		t.Fatal(err)
	}
	before := SyncLog(t, st)
	if len(before) != 5 {
		t.Fatalf("%d records before", len(before))
	}

	r, err := st.SyncRehome(ctx, old, 2, false)
	if err != nil || r.Old != old || r.New == old || r.Shared != 2 || r.Moved != 3 {
		t.Fatalf("rehome = %+v, %v", r, err)
	}
	if host, _ := st.SyncHost(ctx); host != r.New {
		t.Fatalf("host %s after the rehome to %s", host, r.New)
	}
	after := SyncLog(t, st)
	if len(after) != 3 {
		t.Fatalf("the new host's log holds %d records, want 3", len(after))
	}
	for i, x := range after {
		was := before[i+2]
		if x.Index != int64(i+1) || x.HLC != was.HLC || x.Decoded.Type() != was.Decoded.Type() {
			t.Fatalf("record %d of the new host: %d %s %s, was %d %s %s", i+1, x.Index, x.HLC, x.Decoded.Type(), was.Index, was.HLC, was.Decoded.Type())
		}
	}
	tr, ok := after[2].Decoded.(*synclog.Trashed)
	if !ok || tr.Seen[old] != 2 || tr.Seen[r.New] != 2 {
		t.Fatalf("the trash's view after the rehome: %+v", after[2].Decoded)
	}
	if v, err := st.SyncApplied(ctx); err != nil || v[old] != 2 {
		t.Fatalf("applied after the rehome: %v, %v", v, err)
	}
	hi("cli:three")
	if got := SyncLog(t, st); len(got) != 5 || got[4].Index != 5 {
		t.Fatalf("the new host's log after two more changes: %d records", len(got))
	}
	if again, err := st.SyncRehome(ctx, old, 2, false); err != nil || again.New != r.New || again.Moved != 0 {
		t.Fatalf("a second rehome from the old host = %+v, %v", again, err)
	}
}
