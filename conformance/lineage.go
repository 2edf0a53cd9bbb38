package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// texts is what msgs say, in order.
func texts(msgs []*loom.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Text()
	}
	return out
}

// wantTexts checks what session id holds, whole and read in windows:
// newest-N, paging back and forward across the points where it forked,
// one turn, and the context.
func wantTexts(t *testing.T, st loom.Store, id string, want []string) {
	t.Helper()
	all := mustMessages(t, st, id, loom.MessageQuery{})
	if got := texts(all); !slices.Equal(got, want) {
		t.Fatalf("%s holds %q, want %q", id, got, want)
	}
	checkSeqs(t, all, 1)
	for _, m := range all {
		if m.SessionID != id {
			t.Fatalf("message %d of %s reads as %s's", m.Seq, id, m.SessionID)
		}
	}
	n := int64(len(want))
	for limit := int64(1); limit <= n+1; limit++ {
		got := texts(mustMessages(t, st, id, loom.MessageQuery{Limit: int(limit)}))
		if w := want[max(0, n-limit):]; !slices.Equal(got, w) {
			t.Fatalf("newest %d of %s = %q, want %q", limit, id, got, w)
		}
		for before := int64(1); before <= n+1; before++ {
			got := texts(mustMessages(t, st, id, loom.MessageQuery{Limit: int(limit), Before: before}))
			if w := want[max(0, before-1-limit) : before-1]; !slices.Equal(got, w) {
				t.Fatalf("newest %d before %d of %s = %q, want %q", limit, before, id, got, w)
			}
		}
	}
	for after := int64(0); after <= n; after++ {
		if got := texts(mustMessages(t, st, id, loom.MessageQuery{After: after})); !slices.Equal(got, want[after:]) {
			t.Fatalf("after %d of %s = %q", after, id, got)
		}
		for limit := int64(1); limit <= n-after+1; limit++ {
			got := texts(mustMessages(t, st, id, loom.MessageQuery{After: after, Limit: int(limit), Oldest: true}))
			if w := want[after:min(n, after+limit)]; !slices.Equal(got, w) {
				t.Fatalf("oldest %d after %d of %s = %q, want %q", limit, after, id, got, w)
			}
		}
	}
	turns := map[int][]string{}
	for _, m := range all {
		turns[m.Turn] = append(turns[m.Turn], m.Text())
	}
	for turn, w := range turns {
		if turn == 0 {
			continue
		}
		if got := texts(mustMessages(t, st, id, loom.MessageQuery{Turn: turn})); !slices.Equal(got, w) {
			t.Fatalf("turn %d of %s = %q, want %q", turn, id, got, w)
		}
		if got := texts(mustMessages(t, st, id, loom.MessageQuery{Turn: turn, Limit: 1, Oldest: true})); !slices.Equal(got, w[:1]) {
			t.Fatalf("start of turn %d of %s = %q, want %q", turn, id, got, w[:1])
		}
	}
	s, err := st.Session(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if s.MessageCount != len(want) {
		t.Fatalf("%s counts %d messages, holds %d", id, s.MessageCount, len(want))
	}
	c, err := st.Context(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	from := max(s.SummarySeq, 1)
	if got := texts(c); !slices.Equal(got, want[from-1:]) {
		t.Fatalf("context of %s = %q, want from %d", id, got, from)
	}
}

// hitsIn returns the sessions a search for text finds it in, sorted.
func hitsIn(t *testing.T, st loom.Store, q loom.SearchQuery) []string {
	t.Helper()
	// Which sessions hold a message: the every-word hits only.
	q.UserID, q.Exact = "alice", true
	hits, err := st.Search(ctx(t), q)
	if err != nil {
		t.Fatal(err)
	}
	// A message is one hit, in the session it was written in (the
	// oldest that holds it), naming the others; they hold it at the same
	// seq.
	var out []string
	seen := map[string]bool{}
	for _, h := range hits {
		if seen[h.MessageID] {
			t.Fatalf("message %s is more than one hit: %+v", h.MessageID, hits)
		}
		seen[h.MessageID] = true
		if !slices.IsSorted(h.AlsoIn) || slices.Contains(h.AlsoIn, h.SessionID) || (len(h.AlsoIn) > 0 && h.AlsoIn[0] < h.SessionID) {
			t.Fatalf("hit %+v: AlsoIn must be sorted, later than the hit's session and not hold it", h)
		}
		for _, id := range append([]string{h.SessionID}, h.AlsoIn...) {
			out = append(out, fmt.Sprintf("%s:%d", id, h.Seq))
		}
	}
	slices.Sort(out)
	return out
}

func at(id string, seqs ...int) []string {
	var out []string
	for _, s := range seqs {
		out = append(out, fmt.Sprintf("%s:%d", id, s))
	}
	return out
}

func sorted(lists ...[]string) []string {
	out := slices.Concat(lists...)
	slices.Sort(out)
	return out
}

// §3.7 forks of forks: a fork holds what it inherits as its source held
// it, read in any window as if it were its own, found by search as its
// own, and written only as a copy; deleting the sessions it inherits
// from loses none of it.
func testForkLineage(t *testing.T, open Opener) {
	l := newForkLineage(t, open(t))
	inOrder(t, l.search, l.writeInherited, l.purgeSources, l.idComesBack)
}

// forkLineage is testForkLineage's tree: p, its fork f at turn 3, f's
// forks g (at turn 1) and h, and the forks of h made later; grand and
// other are what h and g read.
type forkLineage struct {
	st                     loom.Store
	p, f, g, h, k1, k2, k3 *loom.Session
	grand, other           []string
}

func newForkLineage(t *testing.T, st loom.Store) *forkLineage {
	p := newSession("alice", "cli:lineage")
	say := func(s *loom.Session, msgs ...string) {
		t.Helper()
		for _, m := range msgs {
			role := loom.RoleAssistant
			if strings.HasPrefix(m, "q") {
				role = loom.RoleUser
			}
			mustAppend(t, st, s, text(role, m))
		}
	}
	say(p, "q1 root", "a1 root", "q2 root", "a2 root")
	sum := text(loom.RoleSummary, "s root summary")
	mustAppend(t, st, p, sum)
	say(p, "q3 root", "a3 root", "q4 root", "a4 root")
	root := []string{"q1 root", "a1 root", "q2 root", "a2 root", "s root summary", "q3 root", "a3 root", "q4 root", "a4 root"}
	wantTexts(t, st, p.ID, root)

	// A fork at turn 3 holds the summary; it goes on alone.
	f, err := st.Fork(ctx(t), p.ID, loom.ForkOptions{Turn: 3})
	if err != nil {
		t.Fatal(err)
	}
	if f.MessageCount != 7 || f.SummarySeq != 5 || f.LastPrompt != "q3 root" {
		t.Fatalf("fork = %+v", f)
	}
	say(f, "q4 fork", "a4 fork")
	fork := append(slices.Clone(root[:7]), "q4 fork", "a4 fork")
	wantTexts(t, st, f.ID, fork)
	// A fork of the fork before its own turn, and one after: they read
	// from two sessions' rows.
	g, err := st.Fork(ctx(t), f.ID, loom.ForkOptions{Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	if g.SummarySeq != 0 || g.MessageCount != 2 {
		t.Fatalf("fork of the fork at turn 1 = %+v", g)
	}
	h, err := st.Fork(ctx(t), f.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	say(h, "q5 grand", "a5 grand")
	say(g, "q2 other")
	grand := append(slices.Clone(fork), "q5 grand", "a5 grand")
	other := []string{"q1 root", "a1 root", "q2 other"}
	wantTexts(t, st, h.ID, grand)
	wantTexts(t, st, g.ID, other)
	wantTexts(t, st, f.ID, fork)
	wantTexts(t, st, p.ID, root)
	// The messages inherited are the source's: same ids.
	pm, hm := mustMessages(t, st, p.ID, loom.MessageQuery{}), mustMessages(t, st, h.ID, loom.MessageQuery{})
	for i := range 7 {
		if hm[i].ID != pm[i].ID {
			t.Fatalf("inherited message %d has id %s, its source %s", i+1, hm[i].ID, pm[i].ID)
		}
	}
	return &forkLineage{st: st, p: p, f: f, g: g, h: h, grand: grand, other: other}
}

// search: search finds an inherited message in every session that
// holds it, and in a session's own search.
func (l *forkLineage) search(t *testing.T) {
	st, p, f, g, h := l.st, l.p, l.f, l.g, l.h
	if got, want := hitsIn(t, st, loom.SearchQuery{Text: "a1 root", Exact: true}), sorted(at(p.ID, 2), at(f.ID, 2), at(g.ID, 2), at(h.ID, 2)); !slices.Equal(got, want) {
		t.Fatalf("search for an inherited message = %v, want %v", got, want)
	}
	if got, want := hitsIn(t, st, loom.SearchQuery{Text: "a4 fork"}), sorted(at(f.ID, 9), at(h.ID, 9)); !slices.Equal(got, want) {
		t.Fatalf("search for the fork's own = %v, want %v", got, want)
	}
	if got, want := hitsIn(t, st, loom.SearchQuery{Text: "root summary", SessionID: h.ID}), at(h.ID, 5); !slices.Equal(got, want) {
		t.Fatalf("search in the grandchild = %v, want %v", got, want)
	}
	if list := listBoth(t, st, loom.SessionFilter{UserID: "alice", Text: "a3 root"}); len(list) != 3 {
		t.Fatalf("sessions whose messages say a3 root = %d", len(list))
	}
}

func (l *forkLineage) writeInherited(t *testing.T) {
	st, h, grand := l.st, l.h, l.grand
	// Writing an inherited message changes a copy in the writer only,
	// whether an update or a repair writes it.
	tool := &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "a5 tool"}, {Type: loom.PartTool, CallID: "c1", Name: "read_file", Status: loom.ToolRunning}}}
	mustAppend(t, st, h, tool)
	k1, err := st.Fork(ctx(t), h.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k2, err := st.Fork(ctx(t), h.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	part := tool.Parts[1]
	part.Status, part.Output = loom.ToolCompleted, json.RawMessage(`"zebra output"`)
	if err := st.UpdatePart(ctx(t), k1.ID, 12, part); err != nil {
		t.Fatal(err)
	}
	if n, err := st.RepairInterrupted(ctx(t), k2.ID); err != nil || n != 1 {
		t.Fatalf("repair = %d, %v", n, err)
	}
	status := func(id string) string {
		t.Helper()
		m := mustMessages(t, st, id, loom.MessageQuery{Before: 13, Limit: 1})
		if len(m) != 1 || m[0].Seq != 12 {
			t.Fatalf("no message 12 in %s", id)
		}
		return m[0].Parts[1].Status
	}
	if status(h.ID) != loom.ToolRunning || status(k1.ID) != loom.ToolCompleted || status(k2.ID) != loom.ToolError {
		t.Fatalf("writes of an inherited part: source %s, update %s, repair %s", status(h.ID), status(k1.ID), status(k2.ID))
	}
	if got, want := hitsIn(t, st, loom.SearchQuery{Text: "zebra"}), at(k1.ID, 12); !slices.Equal(got, want) {
		t.Fatalf("search for the fork's update = %v, want %v", got, want)
	}
	if got := hitsIn(t, st, loom.SearchQuery{Text: "a5 tool"}); !slices.Equal(got, sorted(at(h.ID, 12), at(k1.ID, 12), at(k2.ID, 12))) {
		t.Fatalf("search for the updated message = %v, want it in all three", got)
	}
	// The copy is the fork's own from now on: writing it again changes
	// it in place, and the source's own write is its own.
	part.Output = json.RawMessage(`"zebra output again"`)
	if err := st.UpdatePart(ctx(t), k1.ID, 12, part); err != nil {
		t.Fatal(err)
	}
	// The source writing a message its forks inherit changes its own:
	// a fork made while the tool ran keeps it running, as it was when
	// the fork was made (the fork's own repair marks it, on resume).
	k3, err := st.Fork(ctx(t), h.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := st.RepairInterrupted(ctx(t), h.ID); err != nil || n != 1 || status(h.ID) != loom.ToolError || status(k1.ID) != loom.ToolCompleted || status(k3.ID) != loom.ToolRunning {
		t.Fatalf("repair of the source = %d, %v; forks: %s, %s", n, err, status(k1.ID), status(k3.ID))
	}
	part.Output = json.RawMessage(`"zebra output late"`)
	if err := st.UpdatePart(ctx(t), h.ID, 12, part); err != nil || status(h.ID) != loom.ToolCompleted || status(k3.ID) != loom.ToolRunning {
		t.Fatalf("update of the source = %v; fork made before: %s", err, status(k3.ID))
	}
	if got := hitsIn(t, st, loom.SearchQuery{Text: "late"}); !slices.Equal(got, at(h.ID, 12)) {
		t.Fatalf("search for the source's late output = %v", got)
	}
	grand = append(grand, "a5 tool")
	for _, id := range []string{h.ID, k1.ID, k2.ID, k3.ID} {
		wantTexts(t, st, id, grand)
	}
	l.k1, l.k2, l.k3, l.grand = k1, k2, k3, grand
}

func (l *forkLineage) purgeSources(t *testing.T) {
	st, p, f, g, h, k1, k2, k3 := l.st, l.p, l.f, l.g, l.h, l.k1, l.k2, l.k3
	grand, other := l.grand, l.other
	// Usage by model counts each message once, in the session that made
	// it.
	priced := text(loom.RoleAssistant, "a6 priced")
	priced.Model, priced.Provider, priced.Usage = "m", "p", loom.Usage{InputTokens: 7, APICalls: 1}
	mustAppend(t, st, h, priced)
	hf, err := st.Fork(ctx(t), h.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := st.Usage(ctx(t), loom.UsageFilter{UserID: "alice"})
	if err != nil || len(rep.ByModel) != 1 || rep.ByModel[0].Usage.InputTokens != 7 || rep.ByModel[0].Messages != 1 {
		t.Fatalf("usage by model = %+v, %v", rep.ByModel, err)
	}

	// Purging the sessions a fork reads from loses none of its history.
	for _, id := range []string{p.ID, f.ID} {
		if _, err := st.Delete(ctx(t), id, loom.DeleteOptions{Purge: true}); err != nil {
			t.Fatal(err)
		}
	}
	wantTexts(t, st, g.ID, other)
	grand = append(grand, "a6 priced")
	wantTexts(t, st, h.ID, grand)
	if got, want := hitsIn(t, st, loom.SearchQuery{Text: "a1 root", Exact: true}), sorted(at(g.ID, 2), at(h.ID, 2), at(k1.ID, 2), at(k2.ID, 2), at(k3.ID, 2), at(hf.ID, 2)); !slices.Equal(got, want) {
		t.Fatalf("search after purging the sources = %v, want %v", got, want)
	}
	if got := hitsIn(t, st, loom.SearchQuery{Text: "a4 root", Exact: true}); len(got) != 0 {
		t.Fatalf("a message only the purged sessions held is still found: %v", got)
	}
	l.grand = grand
}

func (l *forkLineage) idComesBack(t *testing.T) {
	st, f, g, h, grand, other := l.st, l.f, l.g, l.h, l.grand, l.other
	// A purged session's id can come back (an import of its export)
	// while its forks still read its rows: each holds its own.
	then := time.Now().UTC().Truncate(time.Millisecond)
	back := &loom.SessionData{Session: &loom.Session{ID: f.ID, UserID: "alice", Kind: loom.KindMain, Title: "back", CreatedAt: then, UpdatedAt: then}}
	for i, s := range []string{"q1 back", "a1 back"} {
		m := text(loom.RoleUser, s)
		m.ID, m.Seq, m.Parts[0].ID, m.CreatedAt = loom.NewID(), int64(i+1), loom.NewID(), then
		back.Messages = append(back.Messages, m)
	}
	if err := st.Import(ctx(t), []*loom.SessionData{back}); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, st, f.ID, []string{"q1 back", "a1 back"})
	wantTexts(t, st, h.ID, grand)
	wantTexts(t, st, g.ID, other)
	if _, err := st.Delete(ctx(t), f.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	wantTexts(t, st, h.ID, grand)
}

// §4 rewind, over and over, of forks too: each rewind's fork holds the
// conversation as it was, the session goes on from the turn it kept,
// and purging the sessions the others read from leaves those whole.
func testRewindLineage(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:rewinds")
	var want []string
	for turn := 1; turn <= 6; turn++ {
		for _, m := range turnMessages(turn) {
			mustAppend(t, st, s, m)
			want = append(want, m.Text())
		}
	}
	f, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{Turn: 5})
	if err != nil {
		t.Fatal(err)
	}
	r1, err := st.Rewind(ctx(t), s.ID, loom.RewindOptions{Turn: 2})
	if err != nil {
		t.Fatal(err)
	}
	wantTexts(t, st, r1.ID, want)
	wantTexts(t, st, s.ID, want[:4])
	wantTexts(t, st, f.ID, want[:10])
	mustAppend(t, st, s, text(loom.RoleUser, "question 3b"), text(loom.RoleAssistant, "answer 3b"))
	mustAppend(t, st, s, text(loom.RoleUser, "question 4b"))
	now := append(slices.Clone(want[:4]), "question 3b", "answer 3b", "question 4b")
	wantTexts(t, st, s.ID, now)
	// Rewinding again, past the first rewind's point and before it.
	r2, err := st.Rewind(ctx(t), s.ID, loom.RewindOptions{Turn: 3})
	if err != nil {
		t.Fatal(err)
	}
	wantTexts(t, st, r2.ID, now)
	wantTexts(t, st, s.ID, now[:6])
	r3, err := st.Rewind(ctx(t), s.ID, loom.RewindOptions{Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	wantTexts(t, st, r3.ID, now[:6])
	wantTexts(t, st, s.ID, now[:2])
	mustAppend(t, st, s, text(loom.RoleUser, "question 2c"))
	wantTexts(t, st, s.ID, append(slices.Clone(now[:2]), "question 2c"))
	// A rewind of a fork, and of a rewind's fork.
	fr, err := st.Rewind(ctx(t), f.ID, loom.RewindOptions{Turn: 4})
	if err != nil {
		t.Fatal(err)
	}
	wantTexts(t, st, fr.ID, want[:10])
	wantTexts(t, st, f.ID, want[:8])
	rr, err := st.Rewind(ctx(t), r1.ID, loom.RewindOptions{Turn: 3})
	if err != nil {
		t.Fatal(err)
	}
	wantTexts(t, st, rr.ID, want)
	wantTexts(t, st, r1.ID, want[:6])
	if got := hitsIn(t, st, loom.SearchQuery{Text: "answer 6", Exact: true}); !slices.Equal(got, at(rr.ID, 12)) {
		t.Fatalf("search for a turn only one fork holds = %v", got)
	}
	if got := hitsIn(t, st, loom.SearchQuery{Text: "question 3b"}); !slices.Equal(got, sorted(at(r2.ID, 5), at(r3.ID, 5))) {
		t.Fatalf("search after rewinds = %v", got)
	}
	// Purging the sessions the others read from first leaves those
	// whole; purging them all leaves no message.
	for _, id := range []string{s.ID, r1.ID, f.ID} {
		if _, err := st.Delete(ctx(t), id, loom.DeleteOptions{Purge: true}); err != nil {
			t.Fatal(err)
		}
	}
	wantTexts(t, st, rr.ID, want)
	wantTexts(t, st, fr.ID, want[:10])
	wantTexts(t, st, r2.ID, now)
	wantTexts(t, st, r3.ID, now[:6])
	for _, id := range []string{rr.ID, fr.ID, r2.ID, r3.ID} {
		if _, err := st.Delete(ctx(t), id, loom.DeleteOptions{Purge: true}); err != nil {
			t.Fatal(err)
		}
	}
	if got := hitsIn(t, st, loom.SearchQuery{Text: "question"}); len(got) != 0 {
		t.Fatalf("messages left after purging every session: %v", got)
	}
}
