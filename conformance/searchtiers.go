package conformance

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// testSearchAnyWord: a search of several words that no message holds
// all of does not come back empty: it returns the messages that hold
// some of them, marked as such, and never another user's; one whose
// words no message holds, or of one word, stays empty.
func testSearchAnyWord(t *testing.T, open Opener) {
	st := open(t)
	a := newSession("alice", "cli:api")
	mustAppend(t, st, a,
		text(loom.RoleUser, "Add an ActiveSessionRegistry that tracks which chats are in progress"),
		text(loom.RoleAssistant, "Done: the registry keeps every chat's state."),
		text(loom.RoleUser, "Unrelated: bump the linter version"))
	bob := newSession("bob", "cli:api")
	mustAppend(t, st, bob, text(loom.RoleUser, "remember which chats are still in progress"))
	hits, err := st.Search(ctx(t), loom.SearchQuery{UserID: "alice", Text: "remember which chats are still in progress"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || !strings.Contains(hits[0].Snippet, "ActiveSessionRegistry") {
		t.Fatalf("any-word hits: %+v", hits)
	}
	for _, h := range hits {
		if h.Tier != loom.TierAnyWord || h.SessionID == bob.ID || strings.Contains(h.Snippet, "linter") {
			t.Fatalf("any-word hit %+v", h)
		}
	}
	// Every-word hits come first; the page fills up from the tiers.
	if hits, err := st.Search(ctx(t), loom.SearchQuery{UserID: "alice", Text: "chats progress"}); err != nil || len(hits) != 2 || hits[0].Tier != "" ||
		hits[0].Seq != 1 || hits[1].Tier != loom.TierAnyWord || hits[1].Seq != 2 {
		t.Fatalf("an every-word search: %+v, %v", hits, err)
	}
	if hits, err := st.Search(ctx(t), loom.SearchQuery{UserID: "alice", Text: "chats progress", Limit: 1}); err != nil || len(hits) != 1 || hits[0].Tier != "" {
		t.Fatalf("a page of every-word hits: %+v, %v", hits, err)
	}
	for _, q := range []loom.SearchQuery{{Text: "zyzzyva quux"}, {Text: "remember"}, {Text: "remember chats", Exact: true}} {
		q.UserID = "alice"
		if hits, err := st.Search(ctx(t), q); err != nil || len(hits) != 0 {
			t.Fatalf("search %+v: %+v, %v", q, hits, err)
		}
	}
}

// testSearchTiers: a plain query that finds fewer hits than its limit
// goes on through word forms, titles, any word (rarer words first) and
// prefixes and typos, each hit marked with its tier, each message once,
// in tier order; an exact one does not.
func testSearchTiers(t *testing.T, open Opener) {
	f := newTiersFixture(t, open(t))
	inOrder(t, f.wordFormsAndTitles, f.anyWordAndTypos, f.order)
}

// tiersFixture is testSearchTiers' store: alice's sessions, one titled
// and one with a word spelled the American way, and bob's.
type tiersFixture struct {
	st                   loom.Store
	titled, spelled, bob *loom.Session
}

func newTiersFixture(t *testing.T, st loom.Engine) *tiersFixture {
	a := newSession("alice", "cli:api")
	mustAppend(t, st, a,
		text(loom.RoleUser, "Add a registry of the chats in progress"),
		text(loom.RoleAssistant, "Fixed the flaky websocket reconnect loop."),
		text(loom.RoleUser, "a zebra crossed the street near the old market this morning"))
	for i := range 6 {
		mustAppend(t, st, a, text(loom.RoleAssistant, fmt.Sprintf("common common common common %d", i)))
	}
	titled := newSession("alice", "cli:titled")
	titled.Title = "Websocket reconnect storms at night"
	mustAppend(t, st, titled, text(loom.RoleUser, "see the log above"))
	spelled := newSession("alice", "cli:spelled")
	mustAppend(t, st, spelled, text(loom.RoleUser, "the dialyzer run found no type errors"))
	bob := newSession("bob", "cli:api")
	bob.Title = "Websocket storms"
	mustAppend(t, st, bob, text(loom.RoleUser, "register chats, websokcet storms"))
	// An engine that tells its index's size (recall ranks a large
	// index's matches itself) counts at least the messages it holds.
	if sizer := st.Optional().IndexSize; sizer != nil {
		if n, err := sizer.IndexSize(ctx(t)); err != nil || n < 12 {
			t.Errorf("IndexSize = %d, %v; want at least the 12 messages stored", n, err)
		}
	}
	return &tiersFixture{st: st, titled: titled, spelled: spelled, bob: bob}
}

// search runs q as alice and checks that no hit is bob's and no message
// comes back twice.
func (f *tiersFixture) search(t *testing.T, q loom.SearchQuery) []loom.SearchHit {
	t.Helper()
	q.UserID = "alice"
	hits := searchAs(t, f.st, q)
	for i, h := range hits {
		if h.SessionID == f.bob.ID {
			t.Fatalf("search %q returned bob's %+v", q.Text, h)
		}
		for _, o := range hits[:i] {
			if o.MessageID == h.MessageID {
				t.Fatalf("search %q returned a message twice: %+v", q.Text, hits)
			}
		}
	}
	return hits
}

// hitTiers lists the tiers of hits, in order.
func hitTiers(hits []loom.SearchHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Tier)
	}
	return out
}

func (f *tiersFixture) wordFormsAndTitles(t *testing.T) {
	// Word forms: "register" is not "registry" to the engines' stemmers,
	// but they share a stem; the stop words need not be there.
	if hits := f.search(t, loom.SearchQuery{Text: "the register of chats"}); len(hits) == 0 || hits[0].Tier != loom.TierWordForms || hits[0].Seq != 1 {
		t.Fatalf("word forms: %+v", hits)
	}
	if hits := f.search(t, loom.SearchQuery{Text: "register chats", Exact: true}); len(hits) != 0 {
		t.Fatalf("exact search went on through the tiers: %+v", hits)
	}
	// Titles: a session whose title holds the words, after the messages
	// that do.
	hits := f.search(t, loom.SearchQuery{Text: "websocket storms"})
	if len(hits) < 2 || hits[0].Tier != loom.TierTitle || hits[0].SessionID != f.titled.ID ||
		!strings.Contains(hits[0].Snippet, loom.DefaultMarkStart+"Websocket"+loom.DefaultMarkEnd) ||
		hits[1].Tier != loom.TierAnyWord || hits[1].Seq != 2 {
		t.Fatalf("title tier: %+v", hits)
	}
}

func (f *tiersFixture) anyWordAndTypos(t *testing.T) {
	// Any word: the rarer word weighs more than a common one said often.
	if hits := f.search(t, loom.SearchQuery{Text: "common zebra"}); len(hits) != 7 || hits[0].Tier != loom.TierAnyWord || hits[0].Seq != 3 {
		t.Fatalf("any word, rarer first: %v %+v", hitTiers(hits), hits)
	}
	// Typos and prefixes of the rare words.
	if hits := f.search(t, loom.SearchQuery{Text: "websokcet"}); len(hits) == 0 || hits[0].Tier != loom.TierFuzzy || hits[0].Seq != 2 {
		t.Fatalf("typo tier: %+v", hits)
	}
	// A letter spelled the other side of the Atlantic is a typo too.
	if hits := f.search(t, loom.SearchQuery{Text: "dialyser"}); len(hits) == 0 || hits[0].Tier != loom.TierFuzzy || hits[0].SessionID != f.spelled.ID {
		t.Fatalf("typo tier, dialyser for dialyzer: %+v", hits)
	}
	if hits := f.search(t, loom.SearchQuery{Text: "reconnecting flakey"}); len(hits) == 0 || hits[0].Seq != 2 || hits[0].Tier == "" {
		t.Fatalf("typo and word form: %v %+v", hitTiers(hits), hits)
	}
}

func (f *tiersFixture) order(t *testing.T) {
	// The tiers fill a page in their order.
	hits := f.search(t, loom.SearchQuery{Text: "websocket chats zebra storms"})
	order := map[string]int{"": 0, loom.TierWordForms: 1, loom.TierTitle: 2, loom.TierAnyWord: 3, loom.TierFuzzy: 4}
	for i := 1; i < len(hits); i++ {
		if order[hits[i].Tier] < order[hits[i-1].Tier] {
			t.Fatalf("tiers out of order: %v", hitTiers(hits))
		}
	}
	if len(hits) != 4 {
		t.Fatalf("mixed query: %v %+v", hitTiers(hits), hits)
	}
	// Nothing to find stays empty, whatever the tiers.
	for _, q := range []string{"qwxzv", "the of and", "zzzzzzzzzzzz yyyyyyyyy"} {
		if hits := f.search(t, loom.SearchQuery{Text: q}); len(hits) != 0 {
			t.Fatalf("search %q = %+v", q, hits)
		}
	}
}

// Imported sessions may name their messages alike (a tool that numbers
// its lines, a store filled before ids were told apart): a message id
// said in two sessions is two messages there, each its own hit in its own
// session, in every tier. Only a message that sessions share (a fork's,
// a rewind's) is one hit naming the others.
func testSearchSameIDs(t *testing.T, open Opener) {
	st := open(t)
	created := time.Date(2025, 7, 1, 9, 0, 0, 0, time.UTC)
	var data []*loom.SessionData
	for i, lines := range [][]string{
		{"Caroline: hello there", "Melanie: the pottery class was lovely, a bowl"},
		{"Caroline: hi again", "Melanie: pottery again, a vase this time"},
	} {
		s := newSession("alice", fmt.Sprintf("claude-code:%d", i))
		s.CreatedAt, s.UpdatedAt = created, created.Add(time.Hour)
		s.Surface, s.Source = "claude-code", &loom.Source{Tool: "claude-code"}
		var msgs []*loom.Message
		for j, l := range lines {
			m := text(loom.RoleUser, l)
			m.ID, m.Seq, m.CreatedAt = fmt.Sprintf("line-%d", j+1), int64(j+1), created.Add(time.Duration(i*10+j)*time.Minute)
			m.Parts[0].ID = m.ID + "/0"
			msgs = append(msgs, m)
		}
		data = append(data, &loom.SessionData{Session: s, Messages: msgs})
	}
	if err := st.Import(ctx(t), data); err != nil {
		t.Fatal(err)
	}
	for _, q := range []loom.SearchQuery{
		{Text: "pottery"},                   // every word
		{Text: "potteries"},                 // word forms
		{Text: "pottery zebra"},             // some words
		{Text: "pottery", Exact: true},      // every word only
		{Text: "pottery", AnyWord: true},    // some words only
		{Text: "Melanie pottery bowl vase"}, // some words, ranked
	} {
		q.UserID = "alice"
		hits, err := st.Search(ctx(t), q)
		if err != nil {
			t.Fatalf("search %q: %v", q.Text, err)
		}
		sessions := map[string]bool{}
		for _, h := range hits {
			if len(h.AlsoIn) > 0 {
				t.Errorf("search %q: %s of session %s named in %v", q.Text, h.MessageID, h.SessionID, h.AlsoIn)
			}
			sessions[h.SessionID] = true
		}
		if len(hits) != 2 || !sessions[data[0].Session.ID] || !sessions[data[1].Session.ID] {
			t.Errorf("search %q: %+v, want line-2 of each session", q.Text, hits)
		}
	}
}

// A title counts for what it holds: a session titled with its own first
// prompt (as imports and new sessions are) is found by that prompt, not
// by its title; a word of the query must be a word of the title ("go" is
// not in "going"); a message that holds more of the words comes before a
// title that holds fewer. A date the query names puts the messages of
// that time first.
func testSearchTitlesWeighed(t *testing.T, open Opener) {
	st := open(t)
	first := "Caroline: Hey Mel! Good to see you! How's it going?"
	greeted := newSession("alice", "cli:greeted")
	greeted.Title = loom.TitleFrom(first)
	mustAppend(t, st, greeted, text(loom.RoleUser, first), text(loom.RoleUser, "Melanie: Hey Caroline! The kids are fine."))
	group := newSession("alice", "cli:group")
	mustAppend(t, st, group, text(loom.RoleUser, "Caroline: I went to a LGBTQ support group yesterday, it was so powerful."))
	live := newSession("alice", "cli:live")
	live.Title = "Going live with the dashboard"
	mustAppend(t, st, live, text(loom.RoleUser, "ship it"))
	search := func(q string) []loom.SearchHit {
		t.Helper()
		return searchAs(t, st, loom.SearchQuery{Text: q})
	}
	hits := search("When did Caroline go to the LGBTQ support group?")
	if len(hits) == 0 || hits[0].SessionID != group.ID {
		t.Errorf("the message of the group first: %+v", hits)
	}
	for _, h := range hits {
		if h.Tier == loom.TierTitle {
			t.Errorf("a title made of the first prompt is a title hit: %+v", h)
		}
	}
	for _, h := range search("go dashboard") {
		if h.Tier == loom.TierTitle {
			t.Errorf(`"go" matched "Going": %+v`, h)
		}
	}
	if hits := search("dashboard live"); len(hits) == 0 || hits[0].SessionID != live.ID || hits[0].Tier != loom.TierTitle {
		t.Errorf("a title of its own: %+v", hits)
	}

	// Dates: the same words in March and in July; the query names March
	// (the older: equal scores would put July first).
	march, july := newSession("alice", "cli:march"), newSession("alice", "cli:july")
	for _, s := range []struct {
		s  *loom.Session
		at time.Time
	}{{march, time.Date(2024, 3, 2, 10, 0, 0, 0, time.UTC)}, {july, time.Date(2024, 7, 9, 10, 0, 0, 0, time.UTC)}} {
		m := text(loom.RoleUser, "we rotated the staging certificates and the proxy keys today")
		m.CreatedAt = s.at
		mustAppend(t, st, s.s, m)
	}
	for _, q := range []string{"rotate staging certificates in March 2024", "when did we rotate the proxy keys in March?"} {
		if hits := search(q); len(hits) < 2 || hits[0].SessionID != march.ID {
			t.Errorf("%q: %+v", q, hits)
		}
	}
}
