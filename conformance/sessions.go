package conformance

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

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
	all := listBoth(t, st, loom.SessionFilter{UserID: "alice"})
	if len(all) != 25 {
		t.Fatalf("list = %d", len(all))
	}
	for _, f := range []loom.SessionFilter{{UserID: "alice", Limit: 7}, {UserID: "alice", Surface: "telegram"},
		{UserID: "alice", ProjectID: "0123456789abcdef", Limit: 3}, {UserID: "bob"}} {
		listBoth(t, st, f)
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

// SessionFilter.Text: a listing keeps the sessions whose title, key,
// description or last prompt contains the text (ignoring the case of
// ASCII letters), whose id starts with it, or whose messages match it as
// a search does; other filters, paging and the trash still apply.
func testSessionText(t *testing.T, open Opener) {
	st := open(t)
	titled := newSession("alice", "cli:api")
	titled.Title = "Frontend Refactor"
	mustAppend(t, st, titled, text(loom.RoleUser, "plain words"))
	keyed := newSession("alice", "telegram:555")
	keyed.Project = loom.Project{}
	mustAppend(t, st, keyed, text(loom.RoleUser, "more plain words"))
	described := newSession("alice", "cli:described")
	mustAppend(t, st, described, text(loom.RoleUser, "nothing special"))
	desc := "notes on 100% of the rollout_plan"
	if _, err := st.UpdateSession(ctx(t), described.ID, loom.SessionUpdate{Description: &desc}); err != nil {
		t.Fatal(err)
	}
	prompted := newSession("alice", "cli:prompted")
	mustAppend(t, st, prompted, text(loom.RoleUser, "why does the Kubelet restart"))
	messaged := newSession("alice", "cli:messaged")
	mustAppend(t, st, messaged, text(loom.RoleUser, "first question"), text(loom.RoleAssistant, "the buttons are configured in theme.css"),
		text(loom.RoleUser, "second question"))
	bob := newSession("bob", "cli:api")
	bob.Title = "Frontend Refactor"
	mustAppend(t, st, bob, text(loom.RoleUser, "buttons kubelet"))

	list := func(f loom.SessionFilter) []string {
		t.Helper()
		if f.UserID == "" {
			f.UserID = "alice"
		}
		got := listBoth(t, st, f)
		var ids []string
		for _, s := range got {
			ids = append(ids, s.ID)
		}
		return ids
	}
	want := func(text string, ids ...string) {
		t.Helper()
		if got := list(loom.SessionFilter{Text: text}); strings.Join(got, " ") != strings.Join(ids, " ") {
			t.Fatalf("text %q lists %v, want %v", text, got, ids)
		}
	}
	want("frontend", titled.ID)           // title, any case
	want("TELEGRAM:5", keyed.ID)          // key
	want("100%", described.ID)            // description, % is text
	want("rollout_p", described.ID)       // _ is text
	want("rollou%plan")                   // and is no wildcard
	want("kubelet", prompted.ID)          // last prompt
	want("configured theme", messaged.ID) // message words, stemmed
	want("configuring", messaged.ID)
	// An id prefix; the first 13 characters are the millisecond the id
	// was made in, which the other sessions of this test may share.
	want(titled.ID[:23], titled.ID)
	want("nothing-like-this")
	want(titled.ID[:3]) // a prefix is 4 characters or more
	if got := list(loom.SessionFilter{Text: "plain"}); len(got) != 2 || got[0] != keyed.ID {
		t.Fatalf("newest first: %v", got)
	}
	if got := list(loom.SessionFilter{Text: "plain", Surface: "telegram"}); len(got) != 1 || got[0] != keyed.ID {
		t.Fatalf("with a surface: %v", got)
	}
	if got := list(loom.SessionFilter{Text: "frontend", UserID: "bob"}); len(got) != 1 || got[0] != bob.ID {
		t.Fatalf("bob's: %v", got)
	}
	// Paging with a cursor visits each match once.
	page := list(loom.SessionFilter{Text: "question", Limit: 1})
	all := list(loom.SessionFilter{Text: "words"})
	if len(page) != 1 || page[0] != messaged.ID || len(all) != 2 {
		t.Fatalf("pages: %v, %v", page, all)
	}
	first, _ := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice", Text: "words", Limit: 1})
	rest := list(loom.SessionFilter{Text: "words", Before: &loom.Cursor{UpdatedAt: first[0].UpdatedAt, ID: first[0].ID}})
	if len(first) != 1 || len(rest) != 1 || rest[0] == first[0].ID {
		t.Fatalf("second page after %s: %v", first[0].ID, rest)
	}
	// The trash is searched when listed, by metadata and messages.
	if _, err := st.Delete(ctx(t), messaged.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want("buttons")
	if got := list(loom.SessionFilter{Text: "buttons", Deleted: true}); len(got) != 1 || got[0] != messaged.ID {
		t.Fatalf("text in the trash: %v", got)
	}
}

// UpdateSession checks what it sets: a title of one line of at most
// loom.MaxTitleBytes bytes (stored trimmed), a description of at most
// loom.MaxDescriptionBytes bytes, a key of the form SURFACE:NAME; a
// rejected update changes nothing; one with KeepUpdatedAt keeps the
// updated time. Fork names its session by the same rule.
func testUpdateSession(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	s.Title = "before"
	mustAppend(t, st, s, turnMessages(1)...)
	str := func(v string) *string { return &v }
	for _, tc := range []struct {
		u   loom.SessionUpdate
		msg string
	}{
		{loom.SessionUpdate{Title: str(strings.Repeat("x", loom.MaxTitleBytes+1))}, "title is longer than 200 bytes"},
		{loom.SessionUpdate{Title: str("two\nlines")}, "title must be one line"},
		{loom.SessionUpdate{Title: str("ok"), Description: str(strings.Repeat("d", loom.MaxDescriptionBytes+1))}, "description is longer than 10000 bytes"},
		{loom.SessionUpdate{Key: str("no surface")}, `key "no surface" must be SURFACE:NAME, e.g. telegram:12345`},
	} {
		_, err := st.UpdateSession(ctx(t), s.ID, tc.u)
		wantCode(t, err, loom.EINVALID)
		if loom.ErrorMessage(err) != tc.msg {
			t.Fatalf("update %+v: %q, want %q", tc.u, loom.ErrorMessage(err), tc.msg)
		}
	}
	if got, _ := st.Session(ctx(t), s.ID); got.Title != "before" || got.Description != "" || got.Key != "cli:api" {
		t.Fatalf("a rejected update changed the session: %+v", got)
	}
	got, err := st.UpdateSession(ctx(t), s.ID, loom.SessionUpdate{Title: str("  " + strings.Repeat("t", loom.MaxTitleBytes-4) + "  "), Key: str("telegram:9")})
	if err != nil || got.Title != strings.Repeat("t", loom.MaxTitleBytes-4) || got.Key != "telegram:9" || got.Surface != "telegram" {
		t.Fatalf("update = %+v, %v", got, err)
	}
	// A change that is not activity keeps the session's updated time.
	before := got.UpdatedAt
	moved := loom.Project{ID: "aaaabbbbccccdddd", Name: "api", Root: "/elsewhere/api"}
	got, err = st.UpdateSession(ctx(t), s.ID, loom.SessionUpdate{Project: &moved, Key: str("cli:api"), KeepUpdatedAt: true})
	if err != nil || got.Project != moved || got.Key != "cli:api" || !got.UpdatedAt.Equal(before) {
		t.Fatalf("update keeping the time = %+v, %v; want updated at %s", got, err, before)
	}
	_, err = st.Fork(ctx(t), s.ID, loom.ForkOptions{Title: "a\nb"})
	wantCode(t, err, loom.EINVALID)
	_, err = st.UpdateSession(ctx(t), loom.NewID(), loom.SessionUpdate{Title: str("x")})
	wantCode(t, err, loom.ENOTFOUND)
}

// A description set only where it is empty (DescriptionIfEmpty: how a
// summary is stored) is written where the session has none and left out
// where it has one, the change's other fields applied all the same; a
// cleared description may be written again. The check is made in the
// write's own transaction: of conditional writes that race, from
// handles like processes of their own, one sets the description, and
// each is returned the one the session holds.
func testDescriptionIfEmpty(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	mustAppend(t, st, s, turnMessages(1)...)
	before, err := st.Session(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	describe := func(desc string, ifEmpty bool, title *string) *loom.Session {
		t.Helper()
		got, err := st.UpdateSession(ctx(t), s.ID, loom.SessionUpdate{Description: &desc, DescriptionIfEmpty: ifEmpty, Title: title, KeepUpdatedAt: true})
		if err != nil {
			t.Fatalf("describe %q: %v", desc, err)
		}
		return got
	}
	if got := describe("a summary", true, nil); got.Description != "a summary" || !got.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatalf("a summary where there was none: %q, updated at %s (was %s)", got.Description, got.UpdatedAt, before.UpdatedAt)
	}
	describe("mine", false, nil)
	title := "renamed"
	if got := describe("another summary", true, &title); got.Description != "mine" || got.Title != "renamed" {
		t.Fatalf("a summary over the user's description: %q, title %q; want %q, %q", got.Description, got.Title, "mine", "renamed")
	}
	if got, _ := st.Session(ctx(t), s.ID); got.Description != "mine" {
		t.Fatalf("stored description %q, want %q", got.Description, "mine")
	}
	describe("", false, nil)
	if got := describe("a summary again", true, nil); got.Description != "a summary again" {
		t.Fatalf("a summary after the description was cleared: %q", got.Description)
	}
	describe("", false, nil)

	const writers = 8
	got := make([]string, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		h := open(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			desc := fmt.Sprintf("summary %d", i)
			out, err := h.UpdateSession(ctx(t), s.ID, loom.SessionUpdate{Description: &desc, DescriptionIfEmpty: true, KeepUpdatedAt: true})
			if errs[i] = err; err == nil {
				got[i] = out.Description
			}
		}()
	}
	wg.Wait()
	stored, err := st.Session(ctx(t), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	won := 0
	for i := range writers {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v", i, errs[i])
		}
		if got[i] != stored.Description {
			t.Errorf("writer %d was returned description %q, the session holds %q", i, got[i], stored.Description)
		}
		if got[i] == fmt.Sprintf("summary %d", i) {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d racing writers set the description, want 1: %q", won, writers, got)
	}
}

// listBoth lists f with Sessions and with Summaries, and fails unless
// the summaries are the sessions' own (Session.Summary), in the same
// order.
func listBoth(t *testing.T, st loom.Store, f loom.SessionFilter) []*loom.Session {
	t.Helper()
	got, err := st.Sessions(ctx(t), f)
	if err != nil {
		t.Fatalf("list %+v: %v", f, err)
	}
	sums, err := st.Summaries(ctx(t), f)
	if err != nil {
		t.Fatalf("summaries %+v: %v", f, err)
	}
	if len(sums) != len(got) {
		t.Fatalf("filter %+v: %d summaries, %d sessions", f, len(sums), len(got))
	}
	for i, s := range got {
		if want := s.Summary(); !reflect.DeepEqual(sums[i], want) {
			t.Fatalf("filter %+v, row %d: summary\n%+v\nwant\n%+v", f, i, sums[i], want)
		}
	}
	return got
}

// An id as loom prints it resolves back to its session among all of the
// user's: RefLen lengthens the prefix past every other session's shared
// one, whatever was listed.
func testRefLen(t *testing.T, open Opener) {
	st := open(t)
	at := time.Now()
	var ids []string
	for i := range 3 {
		s := newSession("alice", fmt.Sprintf("cli:same-minute-%d", i))
		s.ID = loom.NewIDAt(at) // the same millisecond: 12 characters shared
		mustAppend(t, st, s, text(loom.RoleUser, "hello"))
		ids = append(ids, s.ID)
	}
	lone := newSession("alice", "cli:lone")
	lone.ID = loom.NewIDAt(at.Add(-48 * time.Hour))
	mustAppend(t, st, lone, text(loom.RoleUser, "hello"))
	scope := loom.ResolveScope{UserID: "alice"}
	for _, id := range ids {
		n, err := loom.RefLen(ctx(t), st, scope, []string{id})
		if err != nil || n <= 12 {
			t.Fatalf("RefLen of an id sharing 12 characters = %d, %v", n, err)
		}
		if s, err := st.Resolve(ctx(t), id[:n], scope); err != nil || s.ID != id {
			t.Fatalf("the prefix %s of RefLen does not resolve back: %v", id[:n], err)
		}
	}
	if n, err := loom.RefLen(ctx(t), st, scope, []string{lone.ID}); err != nil || n != loom.ShortIDLen {
		t.Fatalf("RefLen of an id alone in its minute = %d, %v; want %d", n, err, loom.ShortIDLen)
	}
	// Another user's sessions do not lengthen alice's ids.
	bob := newSession("bob", "cli:bob")
	bob.ID = lone.ID[:20] + ids[0][20:]
	mustAppend(t, st, bob, text(loom.RoleUser, "hello"))
	if n, err := loom.RefLen(ctx(t), st, scope, []string{lone.ID}); err != nil || n != loom.ShortIDLen {
		t.Fatalf("RefLen beside another user's session = %d, %v", n, err)
	}
}
