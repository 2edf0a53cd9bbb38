package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// §3.6: every word must appear, quoted parts as phrases, operators and
// punctuation are text, results best first with marked snippets, filters.
func testSearch(t *testing.T, open Opener) {
	st := open(t)
	a := newSession("alice", "cli:api")
	mustAppend(t, st, a,
		text(loom.RoleUser, "How do I configure the postgres connection pool?"),
		text(loom.RoleAssistant, "Set the pool size in config.toml; the connection string goes in LOOM_DB."),
		&loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartTool, CallID: "c1", Name: "read_file", Status: loom.ToolCompleted,
			Input: json.RawMessage(`{"path":"kubernetes.yaml"}`), Output: json.RawMessage(`"replicas: 3"`)}}},
		text(loom.RoleUser, "he said \"hi\" AND (NEAR* -x"),
	)
	b := newSession("alice", "telegram:42")
	b.Project = loom.Project{}
	mustAppend(t, st, b, text(loom.RoleUser, "connection pool tuning for postgres is different"), text(loom.RoleAssistant, "pool pool pool connection connection postgres postgres"))
	bob := newSession("bob", "cli:api")
	mustAppend(t, st, bob, text(loom.RoleUser, "postgres connection pool secrets of bob"))

	search := func(q loom.SearchQuery) []loom.SearchHit {
		t.Helper()
		if q.UserID == "" {
			q.UserID = "alice"
		}
		hits, err := st.Search(ctx(t), q)
		if err != nil {
			t.Fatalf("search %q: %v", q.Text, err)
		}
		return hits
	}
	hits := search(loom.SearchQuery{Text: "postgres pool connection"})
	if len(hits) != 3 {
		t.Fatalf("all-words search found %d hits: %+v", len(hits), hits)
	}
	for i, h := range hits {
		if h.SessionID == bob.ID {
			t.Fatalf("alice's search returned bob's message")
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Fatalf("hits not best first: %+v", hits)
		}
		if h.MessageID == "" || h.Seq == 0 || h.Role == "" || h.CreatedAt.IsZero() {
			t.Fatalf("incomplete hit %+v", h)
		}
	}
	if hits[0].SessionID != b.ID || hits[0].Seq != 2 {
		t.Fatalf("densest message not ranked first: %+v", hits[0])
	}
	if !strings.Contains(hits[0].Snippet, loom.DefaultMarkStart+"pool"+loom.DefaultMarkEnd) {
		t.Fatalf("snippet does not mark the match: %q", hits[0].Snippet)
	}
	// Porter stemming: "configuring" finds "configure".
	if hits := search(loom.SearchQuery{Text: "configuring"}); len(hits) != 1 || hits[0].Seq != 1 {
		t.Fatalf("stemmed search = %+v", hits)
	}
	// Every word must appear.
	if hits := search(loom.SearchQuery{Text: "postgres kubernetes"}); len(hits) != 0 {
		t.Fatalf("search matched a message lacking a word: %+v", hits)
	}
	// A quoted part is a phrase.
	if hits := search(loom.SearchQuery{Text: `"pool size"`}); len(hits) != 1 || hits[0].Seq != 2 {
		t.Fatalf("phrase search = %+v", hits)
	}
	if hits := search(loom.SearchQuery{Text: `"size pool"`}); len(hits) != 0 {
		t.Fatalf("reversed phrase matched: %+v", hits)
	}
	// Tool inputs and outputs are searched.
	if hits := search(loom.SearchQuery{Text: "kubernetes replicas"}); len(hits) != 1 || hits[0].Seq != 3 {
		t.Fatalf("tool search = %+v", hits)
	}
	// Operator words and punctuation are literal text, never an error.
	for _, q := range []string{`he said "hi" AND (NEAR* -x`, `AND`, `OR NOT`, `"`, `NEAR(`, `*`, `-`, `:`, `a:b`, `col:x`, `(((`, `^`, `'`, `""`, `   `, `🙂`, `x"y"z"`, `NEAR(a b, 3)`, `{a b}`, `a + b`} {
		if _, err := st.Search(ctx(t), loom.SearchQuery{Text: q, UserID: "alice"}); err != nil {
			t.Fatalf("search %q failed: %v", q, err)
		}
	}
	if hits := search(loom.SearchQuery{Text: `he said "hi" AND (NEAR* -x`}); len(hits) != 1 || hits[0].Seq != 4 {
		t.Fatalf("literal operators search = %+v", hits)
	}
	// Filters.
	if hits := search(loom.SearchQuery{Text: "postgres", SessionID: a.ID}); len(hits) != 1 || hits[0].SessionID != a.ID {
		t.Fatalf("session filter = %+v", hits)
	}
	if hits := search(loom.SearchQuery{Text: "postgres", Surface: "telegram"}); len(hits) != 2 {
		t.Fatalf("surface filter = %+v", hits)
	}
	if hits := search(loom.SearchQuery{Text: "postgres", ProjectID: a.Project.ID}); len(hits) != 1 {
		t.Fatalf("project filter = %+v", hits)
	}
	if hits := search(loom.SearchQuery{Text: "postgres", Role: loom.RoleAssistant}); len(hits) != 1 || hits[0].Role != loom.RoleAssistant {
		t.Fatalf("role filter = %+v", hits)
	}
	if hits := search(loom.SearchQuery{Text: "postgres", Since: time.Now().Add(time.Hour)}); len(hits) != 0 {
		t.Fatalf("time filter = %+v", hits)
	}
	if hits := search(loom.SearchQuery{Text: "postgres", Until: time.Now().Add(time.Hour)}); len(hits) != 3 {
		t.Fatalf("until filter = %+v", hits)
	}
	if hits := search(loom.SearchQuery{Text: "postgres", Limit: 1}); len(hits) != 1 {
		t.Fatalf("limit = %d hits", len(hits))
	}
	if hits := search(loom.SearchQuery{Text: "secrets", UserID: "bob"}); len(hits) != 1 {
		t.Fatalf("bob's own search = %+v", hits)
	}
	// Custom markers (the dashboard uses its own).
	if hits := search(loom.SearchQuery{Text: "kubernetes", MarkStart: "<b>", MarkEnd: "</b>"}); len(hits) != 1 || !strings.Contains(hits[0].Snippet, "<b>kubernetes</b>") {
		t.Fatalf("custom markers: %+v", hits)
	}
	// Trashed sessions are not searched.
	if _, err := st.Delete(ctx(t), b.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if hits := search(loom.SearchQuery{Text: "tuning"}); len(hits) != 0 {
		t.Fatalf("search found a trashed session: %+v", hits)
	}
}

// §3.7: fork copies turns 1..N with lineage; the copy is independent.
func testFork(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	s.Title = "original"
	for turn := 1; turn <= 4; turn++ {
		msgs := turnMessages(turn)
		// A file attached to the prompt is searchable but is not the
		// prompt's text.
		msgs[0].Parts = append(msgs[0].Parts, loom.Part{Type: loom.PartFile, Mime: "text/plain", Filename: "attached.txt", URL: "file:///attached.txt"})
		mustAppend(t, st, s, msgs...)
	}
	f, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{Turn: 2, Title: "my-fix"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind != loom.KindFork || f.ParentID != s.ID || f.ForkTurn != 2 || f.Title != "my-fix" || f.ID == s.ID {
		t.Fatalf("fork = %+v", f)
	}
	if f.MessageCount != 4 || f.TurnCount != 2 || f.LastPrompt != "question 2" || f.Project != s.Project || f.UserID != "alice" {
		t.Fatalf("fork counters = %+v", f)
	}
	msgs := mustMessages(t, st, f.ID, loom.MessageQuery{})
	checkSeqs(t, msgs, 1)
	orig := mustMessages(t, st, s.ID, loom.MessageQuery{})
	for i, m := range msgs {
		if m.Text() != orig[i].Text() || m.Role != orig[i].Role || !m.CreatedAt.Equal(orig[i].CreatedAt) || m.SessionID != f.ID {
			t.Fatalf("fork message %d = %+v, original %+v", i, m, orig[i])
		}
		if m.ID == orig[i].ID {
			t.Fatalf("fork message %d reuses the original's id", i)
		}
	}
	// Both are searchable, and writing to the fork leaves the parent alone.
	mustAppend(t, st, f, text(loom.RoleUser, "only in the fork"))
	if got, _ := st.Session(ctx(t), s.ID); got.MessageCount != 8 {
		t.Fatalf("parent changed: %d messages", got.MessageCount)
	}
	if hits, _ := st.Search(ctx(t), loom.SearchQuery{Text: "question 1", UserID: "alice"}); len(hits) != 2 {
		t.Fatalf("search over fork and parent = %d hits", len(hits))
	}
	// Updating a copied part changes the fork only.
	tool := &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartTool, CallID: "c", Name: "read_file", Status: loom.ToolRunning}}}
	mustAppend(t, st, s, tool)
	f2, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f2.TurnCount != 4 || f2.MessageCount != 9 || f2.Title != "original (fork)" {
		t.Fatalf("fork of everything = %+v", f2)
	}
	p := tool.Parts[0]
	p.Status, p.Output = loom.ToolCompleted, json.RawMessage(`"fork result"`)
	if err := st.UpdatePart(ctx(t), f2.ID, 9, p); err != nil {
		t.Fatal(err)
	}
	if m := mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 1}); m[0].Parts[0].Status != loom.ToolRunning {
		t.Fatalf("updating the fork changed the parent: %+v", m[0].Parts[0])
	}
	if m := mustMessages(t, st, f2.ID, loom.MessageQuery{Limit: 1}); m[0].Parts[0].Status != loom.ToolCompleted {
		t.Fatalf("fork part not updated: %+v", m[0].Parts[0])
	}
	// Default titles stay unique, so each names one session: a fork of a
	// fork counts on from the same base; other users' titles don't count.
	other := newSession("bob", "cli:api")
	other.Title = "original (fork 2)"
	mustAppend(t, st, other, text(loom.RoleUser, "bob's"))
	for _, tc := range []struct{ from, want string }{{s.ID, "original (fork 2)"}, {f2.ID, "original (fork 3)"}} {
		fk, err := st.Fork(ctx(t), tc.from, loom.ForkOptions{Turn: 1})
		if err != nil || fk.Title != tc.want {
			t.Fatalf("default fork title = %v, %v; want %q", fk, err, tc.want)
		}
	}
	// Deleting the parent leaves the fork whole.
	if _, err := st.Delete(ctx(t), s.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if msgs := mustMessages(t, st, f.ID, loom.MessageQuery{}); len(msgs) != 5 || msgs[0].Text() != "question 1" {
		t.Fatalf("fork after parent purge = %d messages", len(msgs))
	}
	if hits, _ := st.Search(ctx(t), loom.SearchQuery{Text: "answer 2", UserID: "alice"}); len(hits) != 2 {
		t.Fatalf("fork's messages no longer searchable after parent purge: %d hits", len(hits))
	}
	_, err = st.Fork(ctx(t), f.ID, loom.ForkOptions{Turn: 9})
	wantCode(t, err, loom.EINVALID)
	_, err = st.Fork(ctx(t), loom.NewID(), loom.ForkOptions{})
	wantCode(t, err, loom.ENOTFOUND)
}

// §3.8: rename, describe, move; delete to trash and restore; purge; prune
// skips locked sessions and has a dry run.
func testLifecycle(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	mustAppend(t, st, s, turnMessages(1)...)
	child := newSession("alice", "")
	child.Kind, child.ParentID = loom.KindSubagent, s.ID
	mustAppend(t, st, child, text(loom.RoleUser, "sub task"), text(loom.RoleAssistant, "sub answer"))
	title, desc := "Implement OAuth", "the login work"
	got, err := st.UpdateSession(ctx(t), s.ID, loom.SessionUpdate{Title: &title, Description: &desc})
	if err != nil || got.Title != title || got.Description != desc {
		t.Fatalf("rename = %+v, %v", got, err)
	}
	moved := loom.Project{ID: "1111222233334444", Name: "api2", Root: "/new/api2"}
	got, err = st.UpdateSession(ctx(t), s.ID, loom.SessionUpdate{Project: &moved})
	if err != nil || got.Project != moved {
		t.Fatalf("move = %+v, %v", got, err)
	}
	if l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice", ProjectID: moved.ID}); len(l) != 1 {
		t.Fatalf("moved session not listed in its new project")
	}
	// Delete to trash: gone from list, search and resolve, with its child.
	if _, err := st.Delete(ctx(t), s.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"}); len(l) != 0 {
		t.Fatalf("trashed sessions still listed: %d", len(l))
	}
	trash, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice", Deleted: true})
	if len(trash) != 2 {
		t.Fatalf("trash holds %d sessions, want 2", len(trash))
	}
	if hits, _ := st.Search(ctx(t), loom.SearchQuery{Text: "sub answer", UserID: "alice"}); len(hits) != 0 {
		t.Fatalf("trashed child searchable")
	}
	_, err = st.Resolve(ctx(t), title, loom.ResolveScope{UserID: "alice"})
	wantCode(t, err, loom.ENOTFOUND)
	r, err := st.Resolve(ctx(t), title, loom.ResolveScope{UserID: "alice", Deleted: true})
	if err != nil || r.ID != s.ID {
		t.Fatalf("resolve in trash = %v", err)
	}
	// The key is free while the session is in the trash.
	again := newSession("alice", "cli:api")
	again.Project = moved
	mustAppend(t, st, again, text(loom.RoleUser, "new one"))
	wantCode(t, st.Restore(ctx(t), s.ID), loom.ECONFLICT)
	if _, err := st.Delete(ctx(t), again.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if err := st.Restore(ctx(t), s.ID); err != nil {
		t.Fatal(err)
	}
	if l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"}); len(l) != 2 {
		t.Fatalf("after restore %d sessions listed, want 2", len(l))
	}
	if msgs := mustMessages(t, st, child.ID, loom.MessageQuery{}); len(msgs) != 2 {
		t.Fatalf("restored child has %d messages", len(msgs))
	}
	wantCode(t, st.Restore(ctx(t), s.ID), loom.EINVALID)
	// Purge removes everything, children included.
	if _, err := st.Delete(ctx(t), s.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{s.ID, child.ID} {
		if _, err := st.Session(ctx(t), id); loom.ErrorCode(err) != loom.ENOTFOUND {
			t.Fatalf("purged session %s still there: %v", id, err)
		}
		if msgs := mustMessages(t, st, id, loom.MessageQuery{}); len(msgs) != 0 {
			t.Fatalf("purged session %s kept %d messages", id, len(msgs))
		}
	}
	if hits, _ := st.Search(ctx(t), loom.SearchQuery{Text: "question", UserID: "alice"}); len(hits) != 0 {
		t.Fatalf("purged messages still searchable: %+v", hits)
	}
	wantCode(t, errOf(st.Delete(ctx(t), s.ID, loom.DeleteOptions{})), loom.ENOTFOUND)

	// Prune: old sessions go, locked ones stay, dry run changes nothing.
	old1, old2, fresh := newSession("alice", "cli:o1"), newSession("alice", "cli:o2"), newSession("alice", "cli:f")
	mustAppend(t, st, old1, text(loom.RoleUser, "old one"))
	mustAppend(t, st, old2, text(loom.RoleUser, "old two"))
	// Another handle holds old2; opening it takes a while, so it comes
	// before the fresh session, which must stay younger than the age.
	other := open(t)
	lease, err := other.Lock(ctx(t), old2.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx(t))
	time.Sleep(30 * time.Millisecond)
	mustAppend(t, st, fresh, text(loom.RoleUser, "fresh"))
	dry, err := st.Prune(ctx(t), loom.PruneOptions{UserID: "alice", OlderThan: 20 * time.Millisecond, DryRun: true})
	if err != nil || len(dry.Removed) != 1 || dry.Removed[0].ID != old1.ID || len(dry.Skipped) != 1 || dry.Skipped[0].ID != old2.ID {
		t.Fatalf("dry run = %+v, %v", dry, err)
	}
	if l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"}); len(l) != 3 {
		t.Fatalf("dry run removed sessions: %d left", len(l))
	}
	res, err := st.Prune(ctx(t), loom.PruneOptions{UserID: "alice", OlderThan: 20 * time.Millisecond})
	if err != nil || len(res.Removed) != 1 {
		t.Fatalf("prune = %+v, %v", res, err)
	}
	l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"})
	if len(l) != 2 {
		t.Fatalf("after prune %d sessions, want 2", len(l))
	}
	if err := st.Restore(ctx(t), old1.ID); err != nil {
		t.Fatalf("pruned session not restorable: %v", err)
	}
	// Age zero is every session, the one written a moment ago too: a dry
	// run lists them all (the held one as skipped), and changes nothing.
	mustAppend(t, st, fresh, text(loom.RoleUser, "written just now"))
	all, err := st.Prune(ctx(t), loom.PruneOptions{UserID: "alice", DryRun: true})
	if err != nil {
		t.Fatalf("dry run at age zero: %v", err)
	}
	listed := map[string]bool{}
	for _, x := range append(all.Removed, all.Skipped...) {
		listed[x.ID] = true
	}
	live, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"})
	if len(all.Skipped) != 1 || all.Skipped[0].ID != old2.ID || len(listed) != len(live) || !listed[fresh.ID] || !listed[old1.ID] {
		t.Fatalf("dry run at age zero = %d removed, %d skipped of %d live sessions", len(all.Removed), len(all.Skipped), len(live))
	}
	if again, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"}); len(again) != len(live) {
		t.Fatal("dry run at age zero removed sessions")
	}
	_, err = st.Prune(ctx(t), loom.PruneOptions{UserID: "alice", OlderThan: -time.Second, DryRun: true})
	wantCode(t, err, loom.EINVALID)
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

// §3.10: every session with rows is listed, newest first, with filters
// and cursor paging; nothing disappears on its own.
func testNothingLost(t *testing.T, open Opener) {
	st := open(t)
	var ids []string
	for i := 0; i < 25; i++ {
		s := newSession("alice", fmt.Sprintf("cli:api:%d", i))
		if i%5 == 0 {
			s.Key = fmt.Sprintf("telegram:%d", i)
			s.Project = loom.Project{}
		}
		mustAppend(t, st, s, text(loom.RoleUser, fmt.Sprintf("prompt %d", i)))
		ids = append(ids, s.ID)
		time.Sleep(2 * time.Millisecond)
	}
	all, err := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice"})
	if err != nil || len(all) != 25 {
		t.Fatalf("list = %d, %v", len(all), err)
	}
	for i, s := range all {
		if s.ID != ids[24-i] {
			t.Fatalf("list not newest first at %d", i)
		}
	}
	if all[0].LastPrompt != "prompt 24" || all[0].MessageCount != 1 {
		t.Fatalf("list row = %+v", all[0])
	}
	// Cursor paging visits every session once.
	seen := map[string]bool{}
	var cur *loom.Cursor
	for {
		page, err := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice", Limit: 7, Before: cur})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page {
			if seen[s.ID] {
				t.Fatalf("session %s listed twice", s.ID)
			}
			seen[s.ID] = true
		}
		if len(page) < 7 {
			break
		}
		cur = &loom.Cursor{UpdatedAt: page[len(page)-1].UpdatedAt, ID: page[len(page)-1].ID}
	}
	if len(seen) != 25 {
		t.Fatalf("paging saw %d sessions", len(seen))
	}
	if l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice", Surface: "telegram"}); len(l) != 5 {
		t.Fatalf("surface filter = %d", len(l))
	}
	if l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice", ProjectID: "0123456789abcdef"}); len(l) != 20 {
		t.Fatalf("project filter = %d", len(l))
	}
	if l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice", ProjectName: "api"}); len(l) != 20 {
		t.Fatalf("project name filter = %d", len(l))
	}
	if l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice", ProjectName: "web"}); len(l) != 0 {
		t.Fatalf("project name filter for another name = %d", len(l))
	}
	if l, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "bob"}); len(l) != 0 {
		t.Fatalf("bob sees %d of alice's sessions", len(l))
	}
	// A second handle (another process) sees the same sessions.
	if l, _ := open(t).Sessions(ctx(t), loom.SessionFilter{UserID: "alice"}); len(l) != 25 {
		t.Fatalf("second handle lists %d", len(l))
	}
}

// References: exact id, unique prefix of ≥4, key, title; ambiguity lists
// candidates; users never see each other's sessions.
func testResolve(t *testing.T, open Opener) {
	st := open(t)
	a := newSession("alice", "cli:api")
	a.Title = "Refactor the API"
	mustAppend(t, st, a, text(loom.RoleUser, "x"))
	b := newSession("alice", "telegram:7")
	b.Title = "Shared Title"
	mustAppend(t, st, b, text(loom.RoleUser, "y"))
	c := newSession("alice", "discord:9")
	c.Title = "shared title"
	mustAppend(t, st, c, text(loom.RoleUser, "z"))
	scope := loom.ResolveScope{UserID: "alice"}
	for ref, want := range map[string]string{
		a.ID:                   a.ID,
		strings.ToUpper(a.ID):  a.ID,
		"cli:api":              a.ID,
		"refactor the api":     a.ID,
		"  Refactor the API  ": a.ID,
		"telegram:7":           b.ID,
		b.ID:                   b.ID,
	} {
		got, err := st.Resolve(ctx(t), ref, scope)
		if err != nil || got.ID != want {
			t.Fatalf("resolve %q = %v, %v; want %s", ref, got, err, want)
		}
	}
	// Ids made in the same millisecond share long prefixes; a prefix long
	// enough to be unique resolves.
	n := 8
	for ; n < len(a.ID); n++ {
		if !strings.HasPrefix(b.ID, a.ID[:n]) && !strings.HasPrefix(c.ID, a.ID[:n]) {
			break
		}
	}
	if got, err := st.Resolve(ctx(t), a.ID[:n], scope); err != nil || got.ID != a.ID {
		t.Fatalf("prefix %q = %v", a.ID[:n], err)
	}
	_, err := st.Resolve(ctx(t), "shared TITLE", scope)
	wantCode(t, err, loom.EAMBIGUOUS)
	if !strings.Contains(err.Error(), b.ID) || !strings.Contains(err.Error(), c.ID) {
		t.Fatalf("ambiguity error does not list candidates: %v", err)
	}
	// A prefix shared by all three (same millisecond prefix) is ambiguous.
	common := 0
	for common < len(a.ID) && a.ID[common] == b.ID[common] && a.ID[common] == c.ID[common] {
		common++
	}
	if common >= 4 {
		_, err = st.Resolve(ctx(t), a.ID[:common], scope)
		wantCode(t, err, loom.EAMBIGUOUS)
	}
	_, err = st.Resolve(ctx(t), a.ID[:3], scope)
	wantCode(t, err, loom.ENOTFOUND)
	_, err = st.Resolve(ctx(t), a.ID, loom.ResolveScope{UserID: "bob"})
	wantCode(t, err, loom.ENOTFOUND)
	_, err = st.Resolve(ctx(t), "", scope)
	wantCode(t, err, loom.EINVALID)
	// The same key in two projects: the scope's project wins; without a
	// project it is ambiguous.
	d := newSession("alice", "cli:api")
	d.Project = loom.Project{ID: "9999888877776666", Name: "api", Root: "/other/api"}
	mustAppend(t, st, d, text(loom.RoleUser, "w"))
	if got, err := st.Resolve(ctx(t), "cli:api", loom.ResolveScope{UserID: "alice", ProjectID: d.Project.ID}); err != nil || got.ID != d.ID {
		t.Fatalf("key in project = %v", err)
	}
	_, err = st.Resolve(ctx(t), "cli:api", scope)
	wantCode(t, err, loom.EAMBIGUOUS)
}

// Import stores sessions exactly, or nothing at all.
func testImport(t *testing.T, open Opener) {
	st := open(t)
	src := newSession("alice", "cli:api")
	src.Title = "imported"
	created := time.Date(2025, 5, 1, 10, 0, 0, 123e6, time.UTC)
	src.CreatedAt, src.UpdatedAt = created, created.Add(time.Hour)
	src.Usage = loom.Usage{InputTokens: 7, CostUSD: 0.5}
	var msgs []*loom.Message
	for i := 1; i <= 4; i++ {
		role := loom.RoleUser
		if i%2 == 0 {
			role = loom.RoleAssistant
		}
		m := text(role, fmt.Sprintf("imported text %d", i))
		m.ID, m.Seq, m.CreatedAt = loom.NewID(), int64(i), created.Add(time.Duration(i)*time.Minute)
		m.Parts[0].ID = loom.NewID()
		msgs = append(msgs, m)
	}
	child := newSession("alice", "")
	child.Kind, child.ParentID = loom.KindSubagent, src.ID
	child.CreatedAt, child.UpdatedAt = created, created
	data := []*loom.SessionData{{Session: src, Messages: msgs}, {Session: child}}
	if err := st.Import(ctx(t), data); err != nil {
		t.Fatal(err)
	}
	got, err := st.Session(ctx(t), src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "imported" || !got.CreatedAt.Equal(created) || !got.UpdatedAt.Equal(src.UpdatedAt) || got.MessageCount != 4 || got.TurnCount != 2 || got.Usage != src.Usage || got.LastPrompt != "imported text 3" {
		t.Fatalf("imported session = %+v", got)
	}
	stored := mustMessages(t, st, src.ID, loom.MessageQuery{})
	jsonEqual(t, "imported messages", stored, msgs)
	if hits, _ := st.Search(ctx(t), loom.SearchQuery{Text: "imported text", UserID: "alice"}); len(hits) != 4 {
		t.Fatalf("imported messages searchable: %d hits", len(hits))
	}
	// Again: conflict, nothing written.
	wantCode(t, st.Import(ctx(t), data), loom.ECONFLICT)
	// One bad session in a batch: nothing of the batch is written.
	good := newSession("alice", "cli:good")
	good.CreatedAt, good.UpdatedAt = created, created
	bad := newSession("alice", "cli:bad")
	bad.CreatedAt, bad.UpdatedAt = created, created
	gap := text(loom.RoleUser, "gap")
	gap.ID, gap.Seq, gap.CreatedAt = loom.NewID(), 2, created
	err = st.Import(ctx(t), []*loom.SessionData{{Session: good}, {Session: bad, Messages: []*loom.Message{gap}}})
	wantCode(t, err, loom.EINVALID)
	if _, err := st.Session(ctx(t), good.ID); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Fatalf("failed import wrote a session")
	}
	// Appending to an imported session continues its seq.
	mustAppend(t, st, got, text(loom.RoleUser, "after import"))
	if got.MessageCount != 5 {
		t.Fatalf("append after import = %d messages", got.MessageCount)
	}
}

// Usage rolls up per session, project and model.
func testUsage(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	m1 := text(loom.RoleAssistant, "a")
	m1.Model, m1.Provider, m1.Usage = "gpt-x", "openai", loom.Usage{InputTokens: 100, OutputTokens: 10, CostUSD: 1, APICalls: 1}
	m2 := text(loom.RoleAssistant, "b")
	m2.Model, m2.Provider, m2.Usage = "claude-y", "anthropic", loom.Usage{InputTokens: 50, OutputTokens: 5, CacheReadTokens: 20, CostUSD: 2, APICalls: 1}
	mustAppend(t, st, s, text(loom.RoleUser, "q"), m1, m2)
	o := newSession("alice", "telegram:1")
	o.Project = loom.Project{}
	m3 := text(loom.RoleAssistant, "c")
	m3.Model, m3.Provider, m3.Usage = "gpt-x", "openai", loom.Usage{InputTokens: 1, CostUSD: 0.5, APICalls: 1}
	mustAppend(t, st, o, m3)
	rep, err := st.Usage(ctx(t), loom.UsageFilter{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	want := loom.Usage{InputTokens: 151, OutputTokens: 15, CacheReadTokens: 20, CostUSD: 3.5, APICalls: 3}
	if rep.Total != want {
		t.Fatalf("total = %+v, want %+v", rep.Total, want)
	}
	if len(rep.BySession) != 2 || rep.BySession[0].Key != s.ID || rep.BySession[0].Usage.CostUSD != 3 {
		t.Fatalf("by session = %+v", rep.BySession)
	}
	if len(rep.ByProject) != 2 {
		t.Fatalf("by project = %+v", rep.ByProject)
	}
	if len(rep.ByModel) != 2 || rep.ByModel[0].Name != "claude-y" || rep.ByModel[1].Usage.InputTokens != 101 || rep.ByModel[1].Sessions != 2 {
		t.Fatalf("by model = %+v", rep.ByModel)
	}
	// A fork's copied history is not counted again.
	f, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Usage.IsZero() {
		t.Fatalf("fork starts with usage %+v", f.Usage)
	}
	again, _ := st.Usage(ctx(t), loom.UsageFilter{UserID: "alice"})
	if again.Total != want || len(again.ByModel) != 2 || again.ByModel[1].Usage.InputTokens != 101 {
		t.Fatalf("after a fork: total %+v, by model %+v", again.Total, again.ByModel)
	}
	one, _ := st.Usage(ctx(t), loom.UsageFilter{UserID: "alice", SessionID: o.ID})
	if one.Total.CostUSD != 0.5 {
		t.Fatalf("one session usage = %+v", one.Total)
	}
	if none, _ := st.Usage(ctx(t), loom.UsageFilter{UserID: "bob"}); !none.Total.IsZero() {
		t.Fatalf("bob's usage = %+v", none.Total)
	}
}

// §3.12: the library API, used the way an agent written in Go uses it:
// open, append (creating lazily), read newest-N and page back, list,
// search, fork, rename, delete and restore, lock.
func testLibraryAPI(t *testing.T, open Opener) {
	st := open(t)
	s := &loom.Session{ID: loom.NewID(), UserID: "agent", Key: "http:bot"}
	lease, err := st.Lock(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx(t))
	for i := 1; i <= 30; i++ {
		mustAppend(t, st, s, text(loom.RoleUser, fmt.Sprintf("question %d about turbines", i)), text(loom.RoleAssistant, fmt.Sprintf("answer %d", i)))
	}
	if s.MessageCount != 60 || s.Surface != "http" || s.Title != "question 1 about turbines" {
		t.Fatalf("session after appends = %+v", s)
	}
	page := mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 20})
	checkSeqs(t, page, 41)
	older := mustMessages(t, st, s.ID, loom.MessageQuery{Limit: 20, Before: page[0].Seq})
	checkSeqs(t, older, 21)
	list, err := st.Sessions(ctx(t), loom.SessionFilter{UserID: "agent", Surface: "http"})
	if err != nil || len(list) != 1 || list[0].ID != s.ID {
		t.Fatalf("list = %v, %v", list, err)
	}
	hits, err := st.Search(ctx(t), loom.SearchQuery{Text: "turbines 7", UserID: "agent"})
	if err != nil || len(hits) != 1 || hits[0].Seq != 13 {
		t.Fatalf("search = %+v, %v", hits, err)
	}
	f, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{Turn: 10, Title: "branch"})
	if err != nil || f.TurnCount != 10 {
		t.Fatalf("fork = %+v, %v", f, err)
	}
	title := "Turbine talk"
	if _, err := st.UpdateSession(ctx(t), s.ID, loom.SessionUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Resolve(ctx(t), "turbine TALK", loom.ResolveScope{UserID: "agent"}); err != nil || got.ID != s.ID {
		t.Fatalf("resolve by new title = %v", err)
	}
	if _, err := st.Delete(ctx(t), f.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Restore(ctx(t), f.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Session(ctx(t), f.ID); got.DeletedAt != nil {
		t.Fatalf("restored fork still deleted")
	}
}
