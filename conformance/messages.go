package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// §3.1: the first message creates the session and the message together;
// nothing exists before it.
func testLazyCreation(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	if _, err := st.Session(ctx(t), s.ID); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("session exists before its first message: %v", err)
	}
	list, err := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"})
	if err != nil || len(list) != 0 {
		t.Fatalf("list before first message = %d sessions, %v", len(list), err)
	}
	mustAppend(t, st, s, text(loom.RoleUser, "hello there"), text(loom.RoleAssistant, "hi"), text(loom.RoleUser, "second question"))
	got, err := st.Session(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.MessageCount != 3 || got.TurnCount != 2 || got.Surface != "cli" || got.Kind != loom.KindMain || got.LastPrompt != "second question" {
		t.Fatalf("created session = %+v", got)
	}
	if got.Title != "hello there" {
		t.Fatalf("title from first prompt = %q", got.Title)
	}
	// A later prompt never replaces the title.
	mustAppend(t, st, s, text(loom.RoleUser, "third question"))
	if s.Title != "hello there" || s.LastPrompt != "third question" {
		t.Fatalf("after a later prompt: title %q, last prompt %q", s.Title, s.LastPrompt)
	}
	if got.Project.ID != "0123456789abcdef" || got.Project.Name != "api" || got.Project.Root != "/src/api" || got.Cwd != "/src/api" {
		t.Fatalf("project not recorded: %+v", got.Project)
	}
	if got.CreatedAt.IsZero() || got.UpdatedAt.Before(got.CreatedAt) {
		t.Fatalf("times: %v %v", got.CreatedAt, got.UpdatedAt)
	}
	// A second session with the same key in the same project is refused;
	// the same key in another project is another session.
	dup := newSession("alice", "cli:api")
	wantCode(t, st.Append(ctx(t), dup, text(loom.RoleUser, "x")), loom.ECONFLICT)
	other := newSession("alice", "cli:api")
	other.Project = loom.Project{ID: "fedcba9876543210", Name: "api", Root: "/elsewhere/api"}
	mustAppend(t, st, other, text(loom.RoleUser, "y"))
	// The same key for another user is that user's own session.
	bob := newSession("bob", "cli:api")
	mustAppend(t, st, bob, text(loom.RoleUser, "z"))
	// A message with an unknown role is refused and creates nothing.
	bad := newSession("alice", "cli:bad")
	wantCode(t, st.Append(ctx(t), bad, &loom.Message{Role: "robot"}), loom.EINVALID)
	if _, err := st.Session(ctx(t), bad.ID); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("invalid first message created a session: %v", err)
	}
	// Keys and titles are UTF-8 without NUL bytes, on every engine; a
	// first prompt that is not makes a title that is.
	for _, x := range []*loom.Session{newSession("alice", "cli:a\x00b"), newSession("alice", "cli:\xff")} {
		wantCode(t, st.Append(ctx(t), x, text(loom.RoleUser, "x")), loom.EINVALID)
	}
	named := newSession("alice", "cli:named")
	named.Title = "bad \xff title"
	wantCode(t, st.Append(ctx(t), named, text(loom.RoleUser, "x")), loom.EINVALID)
	odd := newSession("alice", "cli:odd")
	mustAppend(t, st, odd, text(loom.RoleUser, "nul\x00 and \xff here"))
	if got, err := st.Session(ctx(t), odd.ID); err != nil || got.Title != "nul\uFFFD and \uFFFD here" {
		t.Fatalf("title made of an odd prompt = %q, %v", got.Title, err)
	}
}

// §3.2: a message and its parts, the index and the counters are stored
// together; seq is gap-free.
func testAtomicAppend(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	start := time.Now().Add(-time.Second)
	u := loom.Usage{InputTokens: 10, OutputTokens: 5, ReasoningTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 1, CostUSD: 0.25, APICalls: 1}
	asst := &loom.Message{Role: loom.RoleAssistant, Model: "m1", Provider: "openai", Usage: u, Parts: []loom.Part{
		{Type: loom.PartReasoning, Text: "thinking about zebras"},
		{Type: loom.PartText, Text: "the answer"},
		{Type: loom.PartStepFinish, Usage: &u},
	}}
	mustAppend(t, st, s, text(loom.RoleUser, "first prompt"), asst)
	mustAppend(t, st, s, text(loom.RoleUser, "second prompt"))
	if s.MessageCount != 3 || s.TurnCount != 2 || s.LastPrompt != "second prompt" {
		t.Fatalf("counters after append = %d messages, %d turns, %q", s.MessageCount, s.TurnCount, s.LastPrompt)
	}
	if s.Usage != u {
		t.Fatalf("session usage = %+v, want %+v", s.Usage, u)
	}
	if s.UpdatedAt.Before(start) {
		t.Fatalf("updated_at not advanced: %v", s.UpdatedAt)
	}
	msgs := mustMessages(t, st, s.ID, loom.MessageQuery{})
	checkSeqs(t, msgs, 1)
	got := msgs[1]
	if got.ID != asst.ID || got.Model != "m1" || got.Provider != "openai" || got.Usage != u || len(got.Parts) != 3 {
		t.Fatalf("stored assistant message = %+v", got)
	}
	for i := range got.Parts {
		if got.Parts[i].ID == "" {
			t.Fatalf("part %d has no id", i)
		}
	}
	jsonEqual(t, "parts", got.Parts, asst.Parts)
	if got.Turn != 1 || msgs[2].Turn != 2 {
		t.Fatalf("turns = %d, %d", got.Turn, msgs[2].Turn)
	}
	// The reasoning text is searchable as soon as the append returns.
	hits, err := st.Search(ctx(t), loom.SearchQuery{Text: "zebras", UserID: "alice"})
	if err != nil || len(hits) != 1 || hits[0].Seq != 2 {
		t.Fatalf("search after append = %+v, %v", hits, err)
	}
	// A batch with one invalid message stores nothing of the batch.
	before := s.MessageCount
	err = st.Append(ctx(t), s, text(loom.RoleUser, "ok"), &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: "bogus"}}})
	wantCode(t, err, loom.EINVALID)
	again, _ := st.Session(ctx(t), s.ID)
	if again.MessageCount != before {
		t.Fatalf("failed batch changed message count %d → %d", before, again.MessageCount)
	}
	// Concurrent appends from two handles keep seq gap-free.
	other := open(t)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, h := range []loom.Store{st, other} {
		wg.Add(1)
		go func(h loom.Store) {
			defer wg.Done()
			x := &loom.Session{ID: s.ID, UserID: "alice", MessageCount: 1}
			for i := 0; i < 50; i++ {
				if err := h.Append(ctx(t), x, text(loom.RoleAssistant, "burst")); err != nil {
					errs <- err
					return
				}
			}
		}(h)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent append: %v", err)
	}
	msgs = mustMessages(t, st, s.ID, loom.MessageQuery{})
	if len(msgs) != before+100 {
		t.Fatalf("after concurrent appends: %d messages, want %d", len(msgs), before+100)
	}
	checkSeqs(t, msgs, 1)
}

// §3.3: newest-N in chronological order, a total order under identical
// timestamps, and paging backwards.
func testNewestN(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	same := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var batch []*loom.Message
	for i := 1; i <= 1000; i++ {
		m := text(loom.RoleAssistant, fmt.Sprintf("m%04d", i))
		m.CreatedAt = same
		batch = append(batch, m)
		if len(batch) == 100 {
			mustAppend(t, st, s, batch...)
			batch = nil
		}
	}
	last := mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 50})
	if len(last) != 50 {
		t.Fatalf("newest-50 returned %d", len(last))
	}
	checkSeqs(t, last, 951)
	for i, m := range last {
		if want := fmt.Sprintf("m%04d", 951+i); m.Text() != want {
			t.Fatalf("newest-50[%d] = %q, want %q", i, m.Text(), want)
		}
		if !m.CreatedAt.Equal(same) {
			t.Fatalf("created_at changed: %v", m.CreatedAt)
		}
	}
	page := mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 50, Before: last[0].Seq})
	checkSeqs(t, page, 901)
	if len(page) != 50 {
		t.Fatalf("page back = %d messages", len(page))
	}
	head := mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 50, Before: 11})
	checkSeqs(t, head, 1)
	if len(head) != 10 {
		t.Fatalf("first page = %d messages, want 10", len(head))
	}
	tail := mustMessages(t, st, s.ID, loom.MessageQuery{After: 995})
	checkSeqs(t, tail, 996)
	if len(tail) != 5 {
		t.Fatalf("after 995 = %d messages", len(tail))
	}
	all := mustMessages(t, st, s.ID, loom.MessageQuery{})
	if len(all) != 1000 {
		t.Fatalf("all = %d", len(all))
	}
	checkSeqs(t, all, 1)
	if none := mustMessages(t, st, loom.NewID(), loom.MessageQuery{Limit: 5}); len(none) != 0 {
		t.Fatalf("unknown session has %d messages", len(none))
	}

	// One turn: its user message and what follows up to the next one,
	// newest-N of it, and nothing for a turn the session does not have.
	tw := newSession("alice", "cli:turns")
	for i := 1; i <= 3; i++ {
		mustAppend(t, st, tw, text(loom.RoleUser, fmt.Sprintf("q%d", i)), text(loom.RoleAssistant, fmt.Sprintf("a%d.1", i)), text(loom.RoleAssistant, fmt.Sprintf("a%d.2", i)))
	}
	turn2 := mustMessages(t, st, tw.ID, loom.MessageQuery{Turn: 2})
	checkSeqs(t, turn2, 4)
	if len(turn2) != 3 || turn2[0].Text() != "q2" || turn2[2].Text() != "a2.2" {
		t.Fatalf("turn 2 = %d messages starting %q", len(turn2), turn2[0].Text())
	}
	if last := mustMessages(t, st, tw.ID, loom.MessageQuery{Turn: 3, Limit: 1}); len(last) != 1 || last[0].Text() != "a3.2" {
		t.Fatalf("newest of turn 3 = %+v", last)
	}
	// A turn read from its start: its oldest two, then what follows.
	start := mustMessages(t, st, tw.ID, loom.MessageQuery{Turn: 3, Limit: 2, Oldest: true})
	if got := texts(start); !slices.Equal(got, []string{"q3", "a3.1"}) {
		t.Fatalf("oldest 2 of turn 3 = %q", got)
	}
	if rest := mustMessages(t, st, tw.ID, loom.MessageQuery{Turn: 3, Limit: 2, Oldest: true, After: start[1].Seq}); !slices.Equal(texts(rest), []string{"a3.2"}) {
		t.Fatalf("turn 3 after seq %d = %q", start[1].Seq, texts(rest))
	}
	if none := mustMessages(t, st, tw.ID, loom.MessageQuery{Turn: 4}); len(none) != 0 {
		t.Fatalf("turn 4 of 3 has %d messages", len(none))
	}
}

// §3.4: tool parts move running → completed/error; an interrupted tool
// call is repaired so no call stays without a result; a failed turn keeps
// its user message and nothing partial.
func testStreamingBoundary(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	mustAppend(t, st, s, text(loom.RoleUser, "read two files"))
	started := time.Now().UTC().Truncate(time.Millisecond)
	call := func(id string) loom.Part {
		return loom.Part{ID: loom.NewID(), Type: loom.PartTool, CallID: id, Name: "read_file", Status: loom.ToolPending, Input: json.RawMessage(`{"path":"a.txt"}`)}
	}
	asst := &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "reading"}, call("c1"), call("c2")}}
	mustAppend(t, st, s, asst)
	p1 := asst.Parts[1]
	p1.Status, p1.StartedAt = loom.ToolRunning, &started
	if err := st.UpdatePart(ctx(t), s.ID, asst.Seq, p1); err != nil {
		t.Fatal(err)
	}
	ended := started.Add(time.Second)
	p1.Status, p1.Output, p1.EndedAt = loom.ToolCompleted, json.RawMessage(`"contents of a"`), &ended
	if err := st.UpdatePart(ctx(t), s.ID, asst.Seq, p1); err != nil {
		t.Fatal(err)
	}
	p2 := asst.Parts[2]
	p2.Status, p2.StartedAt = loom.ToolRunning, &started
	if err := st.UpdatePart(ctx(t), s.ID, asst.Seq, p2); err != nil {
		t.Fatal(err)
	}
	// The tool output is searchable once stored.
	if hits, _ := st.Search(ctx(t), loom.SearchQuery{Text: "contents", UserID: "alice"}); len(hits) != 1 {
		t.Fatalf("tool output not searchable: %+v", hits)
	}
	// The process dies here: c2 is running. Resume repairs it.
	n, err := st.RepairInterrupted(ctx(t), s.ID)
	if err != nil || n != 1 {
		t.Fatalf("repair = %d, %v; want 1", n, err)
	}
	msgs := mustMessages(t, st, s.ID, loom.MessageQuery{})
	got := msgs[1].Parts
	if got[1].Status != loom.ToolCompleted || string(got[1].Output) != `"contents of a"` || got[1].EndedAt == nil {
		t.Fatalf("completed part = %+v", got[1])
	}
	if got[2].Status != loom.ToolError || got[2].Error != loom.Interrupted || got[2].EndedAt == nil {
		t.Fatalf("interrupted part = %+v", got[2])
	}
	if n, _ := st.RepairInterrupted(ctx(t), s.ID); n != 0 {
		t.Fatalf("second repair changed %d parts", n)
	}
	// A pending call (the process died before running it) is repaired too.
	mustAppend(t, st, s, text(loom.RoleUser, "again"), &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{call("c3")}})
	if n, _ := st.RepairInterrupted(ctx(t), s.ID); n != 1 {
		t.Fatalf("pending call not repaired")
	}
	// A turn that failed mid-stream stored only its user message.
	mustAppend(t, st, s, text(loom.RoleUser, "this turn fails"))
	ctxMsgs, err := st.Context(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if last := ctxMsgs[len(ctxMsgs)-1]; last.Role != loom.RoleUser || last.Text() != "this turn fails" {
		t.Fatalf("last message = %+v", last)
	}
	// A part with a new id is added after the message's last part, and
	// is searchable; a message that does not exist is an error, not a
	// silent no-op.
	before := mustMessages(t, st, s.ID, loom.MessageQuery{Before: 3, Limit: 1})[0]
	added := loom.Part{ID: "late-part", Type: loom.PartText, Text: "latecomer words"}
	if err := st.UpdatePart(ctx(t), s.ID, 2, added); err != nil {
		t.Fatal(err)
	}
	after := mustMessages(t, st, s.ID, loom.MessageQuery{Before: 3, Limit: 1})[0]
	if len(after.Parts) != len(before.Parts)+1 || after.Parts[len(after.Parts)-1].Text != "latecomer words" {
		t.Fatalf("parts after adding one: %+v", after.Parts)
	}
	if hits, _ := st.Search(ctx(t), loom.SearchQuery{Text: "latecomer", UserID: "alice"}); len(hits) != 1 || hits[0].Seq != 2 {
		t.Fatalf("added part not searchable: %+v", hits)
	}
	wantCode(t, st.UpdatePart(ctx(t), s.ID, 999, loom.Part{ID: "nope", Type: loom.PartText}), loom.ENOTFOUND)
}

// §3.9: the context is the latest summary plus what follows; history
// stays whole.
func testCompaction(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	for turn := 1; turn <= 3; turn++ {
		mustAppend(t, st, s, turnMessages(turn)...)
	}
	ctxMsgs, err := st.Context(ctx(t), s.ID)
	if err != nil || len(ctxMsgs) != 6 {
		t.Fatalf("context without summary = %d, %v", len(ctxMsgs), err)
	}
	sum := text(loom.RoleSummary, "we discussed three questions")
	sum.Usage = loom.Usage{Compactions: 1, InputTokens: 100, APICalls: 1}
	mustAppend(t, st, s, sum)
	mustAppend(t, st, s, turnMessages(4)...)
	ctxMsgs, _ = st.Context(ctx(t), s.ID)
	if len(ctxMsgs) != 3 || ctxMsgs[0].Role != loom.RoleSummary || ctxMsgs[1].Text() != "question 4" {
		t.Fatalf("context after summary = %+v", ctxMsgs)
	}
	got, _ := st.Session(ctx(t), s.ID)
	if got.Usage.Compactions != 1 || got.SummarySeq != 7 || got.TurnCount != 4 {
		t.Fatalf("session after compaction = %+v", got)
	}
	if all := mustMessages(t, st, s.ID, loom.MessageQuery{}); len(all) != 9 {
		t.Fatalf("compaction lost history: %d messages", len(all))
	}
	mustAppend(t, st, s, text(loom.RoleSummary, "second summary"))
	ctxMsgs, _ = st.Context(ctx(t), s.ID)
	if len(ctxMsgs) != 1 || ctxMsgs[0].Text() != "second summary" {
		t.Fatalf("context after second summary = %+v", ctxMsgs)
	}
	// A fork before the summary starts without it.
	f, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{Turn: 2})
	if err != nil {
		t.Fatal(err)
	}
	if fc, _ := st.Context(ctx(t), f.ID); len(fc) != 4 {
		t.Fatalf("fork context = %d messages", len(fc))
	}
	_, err = st.Context(ctx(t), loom.NewID())
	wantCode(t, err, loom.ENOTFOUND)
}

// testPartMetadata: a message whose one part is text (or reasoning)
// with metadata, as an imported compaction summary is, reads back with
// its text through every read (newest-N, a window, the model's context,
// a fork's inherited messages), appended or imported.
func testPartMetadata(t *testing.T, open Opener) {
	st := open(t)
	meta := json.RawMessage(`{"trigger":"auto","preTokens":155000}`)
	summary := func() *loom.Message {
		m := text(loom.RoleSummary, "the user wants retries with backoff")
		m.Parts[0].Metadata = meta
		return m
	}
	thought := &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartReasoning, Text: "weigh the options", Metadata: json.RawMessage(`{"signature":"c2ln"}`)}}}
	check := func(where string, msgs []*loom.Message) {
		t.Helper()
		found := 0
		for _, m := range msgs {
			switch m.Role {
			case loom.RoleSummary:
				found++
				if m.Text() != "the user wants retries with backoff" || string(m.Parts[0].Metadata) != string(meta) {
					t.Errorf("%s: summary reads back as %+v", where, m.Parts)
				}
			case loom.RoleAssistant:
				if len(m.Parts) == 1 && m.Parts[0].Type == loom.PartReasoning {
					found++
					if m.Parts[0].Text != "weigh the options" {
						t.Errorf("%s: reasoning reads back as %+v", where, m.Parts)
					}
				}
			}
		}
		if found != 2 {
			t.Errorf("%s: %d of the 2 messages read", where, found)
		}
	}
	s := newSession("alice", "cli:api")
	mustAppend(t, st, s, text(loom.RoleUser, "hello"), thought, summary())
	check("appended, newest-N", mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 50}))
	check("appended, all", mustMessages(t, st, s.ID, loom.MessageQuery{}))
	mustAppend(t, st, s, text(loom.RoleUser, "next"))
	ctxMsgs, err := st.Context(ctx(t), s.ID)
	if err != nil || len(ctxMsgs) == 0 || ctxMsgs[0].Text() != "the user wants retries with backoff" {
		t.Fatalf("context = %+v, %v", ctxMsgs, err)
	}
	f, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("fork", mustMessages(t, st, f.ID, loom.MessageQuery{Limit: 10}))

	imp := newSession("alice", "claude-code:abc")
	imp.Source = &loom.Source{Tool: "claude-code", Path: "/x.jsonl"}
	imp.CreatedAt, imp.UpdatedAt = loom.Now(), loom.Now()
	thought2 := *thought
	thought2.Parts = []loom.Part{thought.Parts[0]}
	in := []*loom.Message{text(loom.RoleUser, "hello"), &thought2, summary()}
	for i, m := range in {
		m.ID, m.SessionID, m.Seq, m.CreatedAt = loom.NewID(), imp.ID, int64(i+1), imp.CreatedAt
		m.Parts[0].ID = fmt.Sprintf("%s/0", m.ID)
	}
	if err := st.Import(ctx(t), []*loom.SessionData{{Session: imp, Messages: in}}); err != nil {
		t.Fatal(err)
	}
	check("imported, newest-N", mustMessages(t, st, imp.ID, loom.MessageQuery{Limit: 50}))
	check("imported, all", mustMessages(t, st, imp.ID, loom.MessageQuery{}))
}
