package conformance

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// §4 rewind: the session keeps its id and key and continues from the end
// of turn N; the later turns move to a fork that holds the whole
// conversation, in one transaction, so nothing is lost.
func testRewind(t *testing.T, open Opener) {
	st := open(t)
	s := sessionOfTurns(t, st, "plan", 3, func(turn int, msgs []*loom.Message) {
		msgs[1].Usage = loom.Usage{InputTokens: int64(10 * turn), OutputTokens: 1, CostUSD: 0.25, APICalls: 1}
		msgs[1].Parts[0].Text = fmt.Sprintf("answer %d about zebra%d", turn, turn)
	})
	mustAppend(t, st, s, text(loom.RoleSummary, "summary of three turns"))
	before := mustMessages(t, st, s.ID, loom.MessageQuery{})
	old, err := st.Session(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)

	f, err := st.Rewind(ctx(t), s.ID, loom.RewindOptions{Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkRewoundFork(t, st, s, f, old, before)

	got := checkRewoundSession(t, st, s, f, old, before)
	rewindRefusals(t, st, open, s, got)
}

// checkRewoundFork: the fork rewinding s made holds the whole conversation
// as it was before, messages and all, with its counters and usage.
func checkRewoundFork(t *testing.T, st loom.Store, s, f, old *loom.Session, before []*loom.Message) {
	// The fork: the whole conversation as it was, at fork turn 1.
	if f.Kind != loom.KindFork || f.ParentID != s.ID || f.ForkTurn != 1 || f.Title != "plan (rewound)" || f.Key != "" {
		t.Fatalf("rewound fork = %+v", f)
	}
	if f.MessageCount != old.MessageCount || f.TurnCount != 3 || f.LastPrompt != "question 3" || f.SummarySeq != old.SummarySeq || !f.UpdatedAt.Equal(old.UpdatedAt) {
		t.Fatalf("fork counters = %+v, session before = %+v", f, old)
	}
	// It holds the conversation as it was: begun when the session began,
	// never created after its last activity.
	if !f.CreatedAt.Equal(old.CreatedAt) || f.UpdatedAt.Before(f.CreatedAt) {
		t.Fatalf("fork created %v, updated %v; the session was created %v", f.CreatedAt, f.UpdatedAt, old.CreatedAt)
	}
	if f.Usage.InputTokens != 50 || f.Usage.APICalls != 2 || f.Usage.CostUSD != 0.5 {
		t.Fatalf("fork usage = %+v, want the later turns' (50 in, 2 calls, $0.5)", f.Usage)
	}
	fm := mustMessages(t, st, f.ID, loom.MessageQuery{})
	checkSeqs(t, fm, 1)
	if len(fm) != len(before) {
		t.Fatalf("fork holds %d messages, want %d", len(fm), len(before))
	}
	for i, m := range fm {
		if m.Text() != before[i].Text() || m.Turn != before[i].Turn || m.SessionID != f.ID {
			t.Fatalf("fork message %d = %+v, was %+v", i, m, before[i])
		}
		// Every message keeps its id: the fork holds the conversation's
		// messages themselves, not copies.
		if m.ID != before[i].ID {
			t.Fatalf("fork message %d: id %s, original %s", i, m.ID, before[i].ID)
		}
	}
}

// checkRewoundSession: the rewound session keeps its id and key and turn 1,
// search and lineage follow, and it goes on from there.
func checkRewoundSession(t *testing.T, st loom.Store, s, f, old *loom.Session, before []*loom.Message) *loom.Session {
	// The session: same id and key, turn 1 only, counters to match.
	got, err := st.Session(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != "cli:api" || got.MessageCount != 2 || got.TurnCount != 1 || got.LastPrompt != "question 1" || got.SummarySeq != 0 || got.Title != "plan" {
		t.Fatalf("rewound session = %+v", got)
	}
	if got.Usage.InputTokens != 10 || got.Usage.APICalls != 1 || got.Usage.CostUSD != 0.25 || !got.UpdatedAt.After(old.UpdatedAt) {
		t.Fatalf("rewound session usage %+v, updated %v (was %v)", got.Usage, got.UpdatedAt, old.UpdatedAt)
	}
	if kept := mustMessages(t, st, s.ID, loom.MessageQuery{}); len(kept) != 2 || kept[1].ID != before[1].ID {
		t.Fatalf("session keeps %d messages", len(kept))
	}
	// Search follows the rows: a later turn is found in the fork only.
	hits, err := st.Search(ctx(t), loom.SearchQuery{Text: "zebra3", UserID: "alice"})
	if err != nil || len(hits) != 1 || hits[0].SessionID != f.ID {
		t.Fatalf("search for a moved turn = %+v, %v", hits, err)
	}
	// The session goes on from turn 1: seq and turn continue from there.
	mustAppend(t, st, got, text(loom.RoleUser, "a different question 2"))
	if m := mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 1}); m[0].Seq != 3 || m[0].Turn != 2 {
		t.Fatalf("after rewind, the next message is seq %d turn %d", m[0].Seq, m[0].Turn)
	}
	// The lineage shows the fork under the session.
	fam, err := st.Family(ctx(t), loom.FamilyQuery{IDs: []string{s.ID}})
	if err != nil || len(fam) != 2 || fam[1].ID != f.ID {
		t.Fatalf("family after rewind = %v, %v", fam, err)
	}
	return got
}

// rewindRefusals: a second rewind names its fork apart; turns that are not
// there, and a session another process writes, are refused.
func rewindRefusals(t *testing.T, st loom.Store, open Opener, s, got *loom.Session) {
	// A second rewind names its fork apart.
	mustAppend(t, st, got, text(loom.RoleAssistant, "answer"), text(loom.RoleUser, "question 3 again"))
	f2, err := st.Rewind(ctx(t), s.ID, loom.RewindOptions{Turn: 2})
	if err != nil || f2.Title != "plan (rewound 2)" {
		t.Fatalf("second rewind = %+v, %v", f2, err)
	}

	// Turns that are not there, or nothing after: refused, nothing changed.
	for _, turn := range []int{0, -1, 2, 5} {
		wantCode(t, errOf(st.Rewind(ctx(t), s.ID, loom.RewindOptions{Turn: turn})), loom.EINVALID)
	}
	wantCode(t, errOf(st.Rewind(ctx(t), loom.NewID(), loom.RewindOptions{Turn: 1})), loom.ENOTFOUND)
	if again, _ := st.Session(ctx(t), s.ID); again.MessageCount != 4 || again.TurnCount != 2 {
		t.Fatalf("refused rewinds changed the session: %+v", again)
	}

	// Another live process writing the session: ELOCKED, nothing moved.
	other := open(t)
	lease, err := other.Lock(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, errOf(st.Rewind(ctx(t), s.ID, loom.RewindOptions{Turn: 1})), loom.ELOCKED)
	lease.Release(ctx(t))
	if again, _ := st.Session(ctx(t), s.ID); again.MessageCount != 4 {
		t.Fatalf("a locked rewind changed the session: %+v", again)
	}
}

// §4 rewind of a fork: a fork's usage is that of its own messages, so
// rewinding it splits those between it and the new fork, and the turns
// it reads from its parent count on neither side.
func testRewindFork(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	withUsage := func(turn int, in int64) []*loom.Message {
		msgs := turnMessages(turn)
		msgs[1].Usage = loom.Usage{InputTokens: in, APICalls: 1}
		return msgs
	}
	for turn := 1; turn <= 3; turn++ {
		mustAppend(t, st, s, withUsage(turn, int64(100*turn))...)
	}
	usage := func(id string) loom.Usage {
		t.Helper()
		x, err := st.Session(ctx(t), id)
		if err != nil {
			t.Fatal(err)
		}
		return x.Usage
	}
	for _, c := range []struct {
		turn        int
		keep, taken int64
	}{
		{turn: 3, keep: 7, taken: 9},  // after the fork turn: each side its own
		{turn: 1, keep: 0, taken: 16}, // before it: the fork keeps none of its own
	} {
		f, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{Turn: 2})
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, st, f, withUsage(3, 7)...)
		mustAppend(t, st, f, withUsage(4, 9)...)
		if u := usage(f.ID); u.InputTokens != 16 {
			t.Fatalf("fork usage = %+v, want its own messages' 16", u)
		}
		r, err := st.Rewind(ctx(t), f.ID, loom.RewindOptions{Turn: c.turn})
		if err != nil {
			t.Fatal(err)
		}
		if u := usage(f.ID); u.InputTokens != c.keep {
			t.Fatalf("rewind to turn %d: the fork keeps usage %+v, want %d in", c.turn, u, c.keep)
		}
		if u := usage(r.ID); u.InputTokens != c.taken {
			t.Fatalf("rewind to turn %d: the new fork takes usage %+v, want %d in", c.turn, u, c.taken)
		}
	}
	if u := usage(s.ID); u.InputTokens != 600 {
		t.Fatalf("the parent's usage = %+v, want 600 in, as before", u)
	}
}

// §4 archive: hidden from lists and default searches, listed with
// OnlyArchived, found by id and key, kept by prune, and brought back by
// unarchiving or by a new message.
func testArchive(t *testing.T, open Opener) {
	st := open(t)
	a, b := newSession("alice", "cli:api"), newSession("alice", "telegram:7")
	a.Title = "old work"
	mustAppend(t, st, a, text(loom.RoleUser, "archived aardvark"))
	mustAppend(t, st, b, text(loom.RoleUser, "live aardvark"))
	before, _ := st.Session(ctx(t), a.ID)
	yes, no := true, false
	got, err := st.UpdateSession(ctx(t), a.ID, loom.SessionUpdate{Archived: &yes})
	if err != nil || got.ArchivedAt == nil || !got.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatalf("archive = %+v, %v (archiving is not activity)", got, err)
	}
	ids := func(f loom.SessionFilter) []string {
		t.Helper()
		f.UserID = "alice"
		list, err := st.Sessions(ctx(t), f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range list {
			out = append(out, x.ID)
		}
		return out
	}
	if l := ids(loom.SessionFilter{}); !slices.Equal(l, []string{b.ID}) {
		t.Fatalf("default list = %v, want only the live session", l)
	}
	if l := ids(loom.SessionFilter{Archived: loom.OnlyArchived}); !slices.Equal(l, []string{a.ID}) {
		t.Fatalf("archived list = %v", l)
	}
	if l := ids(loom.SessionFilter{Archived: loom.WithArchived}); len(l) != 2 {
		t.Fatalf("list with archived = %v", l)
	}
	if l := ids(loom.SessionFilter{Key: "cli:api", ProjectID: a.Project.ID, Archived: loom.WithArchived}); !slices.Equal(l, []string{a.ID}) {
		t.Fatalf("by key with archived = %v", l)
	}
	// Search leaves archived sessions out unless asked.
	hits, err := st.Search(ctx(t), loom.SearchQuery{Text: "aardvark", UserID: "alice"})
	if err != nil || len(hits) != 1 || hits[0].SessionID != b.ID {
		t.Fatalf("default search = %+v, %v", hits, err)
	}
	hits, err = st.Search(ctx(t), loom.SearchQuery{Text: "aardvark", UserID: "alice", Archived: true})
	if err != nil || len(hits) != 2 {
		t.Fatalf("search with archived = %+v, %v", hits, err)
	}
	// Found by id and title; a prune of everything keeps it.
	if x, err := st.Resolve(ctx(t), "old work", loom.ResolveScope{UserID: "alice"}); err != nil || x.ID != a.ID || x.ArchivedAt == nil {
		t.Fatalf("resolve archived = %+v, %v", x, err)
	}
	res, err := st.Prune(ctx(t), loom.PruneOptions{UserID: "alice", DryRun: true})
	if err != nil || slices.ContainsFunc(res.Removed, func(x *loom.Session) bool { return x.ID == a.ID }) {
		t.Fatalf("prune would remove an archived session: %+v, %v", res, err)
	}
	// Unarchive brings it back; so does a new message.
	if got, err = st.UpdateSession(ctx(t), a.ID, loom.SessionUpdate{Archived: &no}); err != nil || got.ArchivedAt != nil {
		t.Fatalf("unarchive = %+v, %v", got, err)
	}
	if _, err = st.UpdateSession(ctx(t), a.ID, loom.SessionUpdate{Archived: &yes}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, got, text(loom.RoleUser, "back to it"))
	if x, _ := st.Session(ctx(t), a.ID); x.ArchivedAt != nil {
		t.Fatalf("a new message left the session archived: %+v", x)
	}
}
