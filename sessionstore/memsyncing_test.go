package sessionstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/memstore"
	"github.com/loomhq/loom/synclog"
)

// Once sync is set up, every change the store makes is a record of its
// sync log, in the same transaction, numbered without gaps and stamped
// in order; before, and when a change is refused, nothing is recorded.
func TestMemSyncLogRecordsEveryChange(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	before := &loom.Session{UserID: "alice", Key: "cli:before"}
	say(t, st, before, loom.RoleUser, "not recorded")
	if log := syncLog(t, st); len(log) != 0 {
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
	q1 := say(t, st, s, loom.RoleUser, "first question")[0]
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
	q2 := say(t, st, s, loom.RoleUser, "second question")[0]
	say(t, st, s, loom.RoleAssistant, "second answer")
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
	now := time.Now().UTC().Truncate(time.Millisecond)
	imp := &loom.SessionData{Session: &loom.Session{ID: loom.NewID(), UserID: "alice", Kind: loom.KindMain, CreatedAt: now, UpdatedAt: now},
		Messages: []*loom.Message{{ID: loom.NewID(), Seq: 1, Role: loom.RoleUser, CreatedAt: now, Parts: []loom.Part{{ID: "p1", Type: loom.PartText, Text: "imported"}}}}}
	if err := st.Import(ctx, []*loom.SessionData{imp}); err != nil {
		t.Fatal(err)
	}

	log := syncLog(t, st)
	// The session made before sync was set up is the log's first record.
	if p, ok := log[0].p.(*synclog.Imported); !ok || p.Sessions[0].Session.ID != before.ID || len(p.Sessions[0].Messages) != 1 {
		t.Fatalf("first record = %#v, want the import of the session made before", log[0].p)
	}
	log = log[1:]
	want := []synclog.Type{synclog.TypeSessionCreated, synclog.TypeMessagesAppended, synclog.TypeMessagesAppended,
		synclog.TypePartUpdated, synclog.TypeUsageUpdated, synclog.TypeMessagesAppended, synclog.TypeMessagesAppended,
		synclog.TypeSessionChanged, synclog.TypeForked, synclog.TypeRewound, synclog.TypeTrashed, synclog.TypeRestored,
		synclog.TypePurged, synclog.TypeImported}
	var got []synclog.Type
	for i, r := range log {
		got = append(got, r.p.Type())
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

	created := log[0].p.(*synclog.SessionCreated)
	if created.Session.ID != s.ID || created.Session.Title != "plan" || created.Session.Key != "cli:api" {
		t.Errorf("session created = %+v", created.Session)
	}
	first, third := log[1].p.(*synclog.MessagesAppended), log[5].p.(*synclog.MessagesAppended)
	if first.FirstSeq != 1 || first.PrevID != "" || first.Messages[0].ID != q1.ID || first.At.IsZero() {
		t.Errorf("first append = %+v", first)
	}
	if third.FirstSeq != 3 || third.PrevID != a1.ID || third.Messages[0].ID != q2.ID {
		t.Errorf("third append = first seq %d after %q, want 3 after %q", third.FirstSeq, third.PrevID, a1.ID)
	}
	if p := log[3].p.(*synclog.PartUpdated); p.MessageID != a1.ID || p.Part.Status != loom.ToolCompleted {
		t.Errorf("part updated = %+v", p)
	}
	if p := log[4].p.(*synclog.UsageUpdated); p.MessageID != a1.ID || p.Usage.InputTokens != 7 {
		t.Errorf("usage updated = %+v", p)
	}
	if p := log[7].p.(*synclog.SessionChanged); p.Title == nil || *p.Title != "the plan" || p.Archive == nil || p.Archive.At == nil || p.At == nil {
		t.Errorf("session changed = %+v", p)
	}
	if p := log[8].p.(*synclog.Forked); p.Session.ID != fork.ID || p.LastSeq != 2 || p.LastID != a1.ID {
		t.Errorf("forked = last seq %d, last id %q; want 2, %q", p.LastSeq, p.LastID, a1.ID)
	}
	if p := log[9].p.(*synclog.Rewound); p.SessionID != s.ID || p.Fork.ID != rewound.ID || p.KeepSeq != 2 || p.KeepID != a1.ID || p.Store == "" {
		t.Errorf("rewound = %+v", p)
	}
	trashed := log[10].p.(*synclog.Trashed)
	if !reflect.DeepEqual(trashed.SessionIDs, []string{fork.ID}) || trashed.Seen[host] != 11 {
		t.Errorf("trashed = %+v; want the fork, having seen this host's 11 records", trashed)
	}
	if p := log[12].p.(*synclog.Purged); !reflect.DeepEqual(p.SessionIDs, []string{fork.ID}) {
		t.Errorf("purged = %+v", p)
	}
	if p := log[13].p.(*synclog.Imported); len(p.Sessions) != 1 || p.Sessions[0].Session.ID != imp.Session.ID || len(p.Sessions[0].Messages) != 1 {
		t.Errorf("imported = %+v", p)
	}
}

// A description set only where it is empty (DescriptionIfEmpty) is
// recorded for sync as it is stored: where the session had one, the
// record leaves it out, and a change of nothing else records nothing, so
// no other machine receives the summary over the user's words.
func TestMemSyncLogRecordsDescriptionIfEmpty(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if _, err := st.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	s := &loom.Session{UserID: "alice", Key: "cli:api", Title: "plan"}
	say(t, st, s, loom.RoleUser, "a question")
	describe := func(u loom.SessionUpdate) []logRecord {
		t.Helper()
		n := len(syncLog(t, st))
		if _, err := st.UpdateSession(ctx, s.ID, u); err != nil {
			t.Fatal(err)
		}
		return syncLog(t, st)[n:]
	}
	summary, mine, title := "a summary", "mine", "renamed"
	added := describe(loom.SessionUpdate{Description: &summary, DescriptionIfEmpty: true, KeepUpdatedAt: true})
	if len(added) != 1 {
		t.Fatalf("a summary where there was none: %d records, want 1", len(added))
	}
	if p, ok := added[0].p.(*synclog.SessionChanged); !ok || p.Description == nil || *p.Description != summary || p.At != nil {
		t.Fatalf("a summary where there was none: %+v", added[0].p)
	}
	describe(loom.SessionUpdate{Description: &mine})
	if added := describe(loom.SessionUpdate{Description: &summary, DescriptionIfEmpty: true, KeepUpdatedAt: true}); len(added) != 0 {
		t.Fatalf("a summary over the user's description recorded %+v", added[0].p)
	}
	added = describe(loom.SessionUpdate{Description: &summary, DescriptionIfEmpty: true, Title: &title})
	if len(added) != 1 {
		t.Fatalf("a summary over the user's description with a new title: %d records, want 1", len(added))
	}
	if p, ok := added[0].p.(*synclog.SessionChanged); !ok || p.Description != nil || p.Title == nil || *p.Title != title {
		t.Fatalf("a summary over the user's description with a new title: %+v", added[0].p)
	}
}

// Setting sync up records what the store held: each session as an
// import of it as it is (a fork whole, the trashed and archived ones
// too), a long one's messages a thousand at a time.
func TestMemEnableSyncRecordsHistory(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	now := time.Now().UTC().Truncate(time.Millisecond)
	long := &loom.SessionData{Session: &loom.Session{ID: loom.NewID(), UserID: "alice", Kind: loom.KindMain, Title: "long", CreatedAt: now, UpdatedAt: now}}
	for i := range 2500 {
		role := loom.RoleUser
		if i%2 == 1 {
			role = loom.RoleAssistant
		}
		long.Messages = append(long.Messages, &loom.Message{ID: loom.NewID(), Seq: int64(i + 1), Role: role, CreatedAt: now,
			Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: fmt.Sprintf("message %d", i+1)}}})
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
	got := map[string][]*loom.Message{}
	rows := map[string]*loom.Session{}
	records := map[string]int{}
	rearchived := false
	for _, r := range syncLog(t, st) {
		switch p := r.p.(type) {
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
			rearchived = p.SessionID == long.Session.ID && p.Archive != nil && p.Archive.At != nil && records[p.SessionID] == 3
		default:
			t.Fatalf("record %d is %s, want imports and appends", r.Index, p.Type())
		}
	}
	if len(got[long.Session.ID]) != 2500 || got[long.Session.ID][2499].Parts[0].Text != "message 2500" || records[long.Session.ID] != 3 {
		t.Errorf("the long session's history holds %d messages in %d records", len(got[long.Session.ID]), records[long.Session.ID])
	}
	if rows[long.Session.ID].ArchivedAt == nil || !rearchived {
		t.Errorf("the archived long session is not recorded archived after its appends (archived %v, again %v)", rows[long.Session.ID].ArchivedAt, rearchived)
	}
	// Applied on another machine, it stays archived.
	other := memstore.New()
	if _, err := other.EnableSync(ctx); err != nil {
		t.Fatal(err)
	}
	applyAll(t, other, pull(t, st, 0))
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

// A long session's history comes in several records: applied, it has
// the usage it has on the machine it came from, not its later chunks'
// twice; so has one imported after sync was set up.
func TestMemApplyLongHistoryKeepsUsage(t *testing.T) {
	ctx := context.Background()
	a, b := memstore.New(), memstore.New()
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
	applyAll(t, b, pull(t, a, 0))
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
