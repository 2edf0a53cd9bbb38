package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/snippet"
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
	// A page is filled from the tiers after the hits of every word
	// (testSearchTiers); an exact search keeps to those.
	hits := search(loom.SearchQuery{Text: "postgres pool connection", Exact: true})
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
	if hits := search(loom.SearchQuery{Text: "configuring", Exact: true}); len(hits) != 1 || hits[0].Seq != 1 {
		t.Fatalf("stemmed search = %+v", hits)
	}
	// Every word must appear in an exact search; a plain one falls back
	// to messages with some of them, marked so (testSearchAnyWord).
	if hits := search(loom.SearchQuery{Text: "postgres kubernetes", Exact: true}); len(hits) != 0 {
		t.Fatalf("search matched a message lacking a word: %+v", hits)
	}
	for _, h := range search(loom.SearchQuery{Text: "postgres kubernetes"}) {
		if h.Tier != loom.TierAnyWord {
			t.Fatalf("a hit lacking a word is not marked: %+v", h)
		}
	}
	// A quoted part is a phrase.
	if hits := search(loom.SearchQuery{Text: `"pool size"`, Exact: true}); len(hits) != 1 || hits[0].Seq != 2 {
		t.Fatalf("phrase search = %+v", hits)
	}
	if hits := search(loom.SearchQuery{Text: `"size pool"`, Exact: true}); len(hits) != 0 {
		t.Fatalf("reversed phrase matched: %+v", hits)
	}
	// Tool inputs and outputs are searched.
	if hits := search(loom.SearchQuery{Text: "kubernetes replicas", Exact: true}); len(hits) != 1 || hits[0].Seq != 3 {
		t.Fatalf("tool search = %+v", hits)
	}
	// Operator words and punctuation are literal text, never an error.
	for _, q := range []string{`he said "hi" AND (NEAR* -x`, `AND`, `OR NOT`, `"`, `NEAR(`, `*`, `-`, `:`, `a:b`, `col:x`, `(((`, `^`, `'`, `""`, `   `, `🙂`, `x"y"z"`, `NEAR(a b, 3)`, `{a b}`, `a + b`} {
		if _, err := st.Search(ctx(t), loom.SearchQuery{Text: q, UserID: "alice"}); err != nil {
			t.Fatalf("search %q failed: %v", q, err)
		}
	}
	if hits := search(loom.SearchQuery{Text: `he said "hi" AND (NEAR* -x`, Exact: true}); len(hits) != 1 || hits[0].Seq != 4 {
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
	// The newest matches only (what a search falls back to when ranking
	// runs out of time): newest first, best-first scores, marked partial,
	// filtered and limited as any search.
	// The newest, c's, is the one ranked last.
	c := newSession("alice", "cli:notes")
	mustAppend(t, st, c, text(loom.RoleUser, strings.Repeat("a long note about many other things, ", 40)+"and postgres once"))
	if hits := search(loom.SearchQuery{Text: "postgres"}); len(hits) != 4 || hits[3].SessionID != c.ID || loom.Partial(hits) {
		t.Fatalf("ranked matches = %+v", hits)
	}
	newest := search(loom.SearchQuery{Text: "postgres", Newest: true})
	if len(newest) != 4 || newest[0].SessionID != c.ID || newest[1].SessionID != b.ID || newest[1].Seq != 2 || newest[2].SessionID != b.ID || newest[3].SessionID != a.ID || !loom.Partial(newest) {
		t.Fatalf("newest matches = %+v", newest)
	}
	for i, h := range newest {
		if !h.Partial || (i > 0 && h.Score > newest[i-1].Score) || !strings.Contains(h.Snippet, loom.DefaultMarkStart+"postgres"+loom.DefaultMarkEnd) {
			t.Fatalf("newest matches: hit %d = %+v", i, h)
		}
	}
	if hits := search(loom.SearchQuery{Text: "postgres", Newest: true, Limit: 1}); len(hits) != 1 || hits[0].MessageID != newest[0].MessageID {
		t.Fatalf("newest match, limit 1 = %+v", hits)
	}
	if hits := search(loom.SearchQuery{Text: "postgres", Newest: true, SessionID: a.ID}); len(hits) != 1 || hits[0].SessionID != a.ID {
		t.Fatalf("newest matches in one session = %+v", hits)
	}
	if hits := search(loom.SearchQuery{Text: "secrets", Newest: true}); len(hits) != 0 {
		t.Fatalf("alice's newest matches hold bob's: %+v", hits)
	}
	// A message a fork inherited is one hit, naming the fork; the fork's
	// own messages are hits of their own.
	fk, err := st.Fork(ctx(t), a.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, fk, text(loom.RoleUser, "kubernetes again, in the fork"))
	hits = search(loom.SearchQuery{Text: "kubernetes"})
	if len(hits) != 2 {
		t.Fatalf("search over a fork = %+v, want the inherited message once and the fork's own", hits)
	}
	for _, h := range hits {
		inherited := h.Seq == 3
		if inherited && (h.SessionID != a.ID || len(h.AlsoIn) != 1 || h.AlsoIn[0] != fk.ID) {
			t.Fatalf("the inherited message's hit = %+v, want one in the session it was written in, naming the fork", h)
		}
		if !inherited && (h.SessionID != fk.ID || len(h.AlsoIn) != 0) {
			t.Fatalf("the fork's own message's hit = %+v", h)
		}
	}
	if hits := search(loom.SearchQuery{Text: "kubernetes", Limit: 1}); len(hits) != 1 {
		t.Fatalf("limit 1 over a fork = %+v", hits)
	}
	if _, err := st.Delete(ctx(t), fk.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
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

// Snippets are the same in every engine: made by package snippet, from
// the whole message or, in a long one, from the text around the match.
func testSnippets(t *testing.T, open Opener) {
	st := open(t)
	var words []string
	for i := range 6000 {
		words = append(words, fmt.Sprintf("filler%d", i))
	}
	words[3000] = "needle"
	long := strings.Join(words, " ")
	short := "(short) message, with a needle!"
	s := newSession("alice", "cli:api")
	mustAppend(t, st, s, text(loom.RoleUser, short), text(loom.RoleAssistant, long))
	hits, err := st.Search(ctx(t), loom.SearchQuery{Text: "needle", UserID: "alice"})
	if err != nil || len(hits) != 2 {
		t.Fatalf("search = %+v, %v", hits, err)
	}
	m := snippet.NewMatcher("needle")
	for _, h := range hits {
		body := map[int64]string{1: short, 2: long}[h.Seq]
		if want := m.Make(body, loom.DefaultMarkStart, loom.DefaultMarkEnd); h.Snippet != want {
			t.Errorf("snippet of message %d = %q, want %q", h.Seq, h.Snippet, want)
		}
	}
}

// A query is bounded in length and words (loom.ParseQuery): beyond, it is
// refused at once as invalid input, whatever its engine; repeated words
// count once.
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

func testSearchLimits(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	mustAppend(t, st, s, text(loom.RoleUser, "the connection pool of postgres"), text(loom.RoleAssistant, strings.Repeat("pool size ", 2000)))
	search := func(q loom.SearchQuery) ([]loom.SearchHit, error) {
		q.UserID = "alice"
		return st.Search(ctx(t), q)
	}
	distinct := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = fmt.Sprintf("pool%d", i)
		}
		return strings.Join(ws, " ")
	}
	// What the agent's session_search was once given: a 36 KB prompt.
	pasted := strings.Repeat("pool size connection postgres ", 1200)
	for _, q := range []loom.SearchQuery{
		{Text: pasted, Exact: true},
		{Text: `"` + pasted + `"`, Exact: true},
		{Text: distinct(loom.MaxQueryWords + 1), Exact: true},
		{Text: pasted, Raw: true},
		{Text: strings.TrimSpace(strings.Repeat("pool ", loom.MaxQueryWords+1)), Raw: true},
	} {
		_, err := search(q)
		if loom.ErrorCode(err) != loom.EINVALID || !strings.Contains(err.Error(), "at most") {
			t.Errorf("search of %d bytes (raw %v) = %v, want a refusal naming the limit", len(q.Text), q.Raw, err)
		}
	}
	if _, err := search(loom.SearchQuery{Text: distinct(loom.MaxQueryWords)}); err != nil {
		t.Errorf("search of %d words: %v", loom.MaxQueryWords, err)
	}
	// A plain query is never refused: over the limits, its first words
	// find what holds some of them.
	for _, q := range []string{pasted, `"` + pasted + `"`, "postgres " + distinct(loom.MaxQueryWords+1)} {
		hits, err := search(loom.SearchQuery{Text: q})
		if err != nil || len(hits) == 0 || hits[0].Tier == "" {
			t.Errorf("plain search of %d bytes = %+v, %v; want hits of a tier", len(q), hits, err)
		}
	}
	// Repeated words are searched once.
	want, err := search(loom.SearchQuery{Text: "pool size", Exact: true})
	if err != nil || len(want) != 1 {
		t.Fatalf("search = %+v, %v", want, err)
	}
	repeated := strings.Repeat("pool Size POOL ", loom.MaxQueryBytes/len("pool Size POOL "))
	if got, err := search(loom.SearchQuery{Text: repeated, Exact: true}); err != nil || len(got) != 1 || got[0].MessageID != want[0].MessageID || got[0].Score != want[0].Score {
		t.Errorf("search of repeated words = %+v, %v; want %+v", got, err, want)
	}
	// Listing sessions by a text no search would take still lists them
	// by their other fields.
	if _, err := st.Sessions(ctx(t), loom.SessionFilter{UserID: "alice", Text: pasted}); err != nil {
		t.Errorf("listing by a long text: %v", err)
	}
}

// A 20 MB message is searched like any other: its snippet is cut from
// around the match (package snippet reads a bounded part of it), and a
// search whose context ends stops.
func testLongMessage(t *testing.T, open Opener) {
	st := open(t)
	words := strings.Fields("session message agent model tool search index store write read fork project memory context token cost usage append stream reply")
	r := rand.New(rand.NewPCG(7, 7))
	var b strings.Builder
	b.WriteString("(start) ")
	for b.Len() < 20<<20 {
		if b.Len() >= 100<<10 && b.Len() < 100<<10+8 {
			b.WriteString("needle ")
		}
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte(' ')
	}
	b.WriteString("haystack.")
	long := b.String()
	s := newSession("alice", "cli:api")
	mustAppend(t, st, s, text(loom.RoleUser, "a short needle"), text(loom.RoleAssistant, long))

	for _, q := range []string{"needle", "haystack"} {
		hits, err := st.Search(ctx(t), loom.SearchQuery{Text: q, UserID: "alice"})
		if err != nil || len(hits) == 0 || hits[0].Seq > 2 {
			t.Fatalf("search %q = %+v, %v", q, hits, err)
		}
		for _, h := range hits {
			body := map[int64]string{1: "a short needle", 2: long}[h.Seq]
			want := snippet.NewMatcher(q).Make(body, loom.DefaultMarkStart, loom.DefaultMarkEnd)
			if h.Snippet != want || len(strings.Fields(h.Snippet)) > snippet.Words+2 {
				t.Errorf("search %q: snippet of message %d = %q, want %q", q, h.Seq, h.Snippet, want)
			}
		}
	}

	// A context that has ended stops a search before it starts, and one
	// that ends while it runs stops it promptly (or it has finished).
	// The queries hold words the message holds hundreds of thousands of
	// times, all distinct or repeated up to the query's length: ranking
	// the message once took minutes for the latter, in one step that
	// nothing interrupted.
	c, cancel := context.WithCancel(ctx(t))
	cancel()
	if _, err := st.Search(c, loom.SearchQuery{Text: "needle", UserID: "alice"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("search with a cancelled context = %v", err)
	}
	some := strings.Join(words[:8], " ") + " "
	for _, tc := range []struct {
		query string
		after time.Duration
	}{
		{strings.Join(words, " "), 20 * time.Millisecond},
		{strings.Repeat(some, loom.MaxQueryBytes/len(some)), 20 * time.Millisecond},
		{strings.Repeat(some, loom.MaxQueryBytes/len(some)), 300 * time.Millisecond},
	} {
		c, cancel := context.WithCancel(ctx(t))
		cancelled := make(chan time.Time, 1)
		timer := time.AfterFunc(tc.after, func() { cancelled <- time.Now(); cancel() })
		start := time.Now()
		_, err := st.Search(c, loom.SearchQuery{Text: tc.query, UserID: "alice"})
		timer.Stop()
		select {
		case at := <-cancelled:
			// Seconds at most on a loaded machine; unbounded, this
			// took minutes.
			if d := time.Since(at); d > 10*time.Second {
				t.Errorf("search of %d bytes returned %v after its context was cancelled", len(tc.query), d)
			}
		default:
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled search = %v, want the context's error", err)
		}
		t.Logf("search of %d bytes cancelled after %v: returned after %v: %v", len(tc.query), tc.after, time.Since(start), err)
		cancel()
	}
}

// testSearchTiers: a plain query that finds fewer hits than its limit
// goes on through word forms, titles, any word (rarer words first) and
// prefixes and typos, each hit marked with its tier, each message once,
// in tier order; an exact one does not.
func testSearchTiers(t *testing.T, open Opener) {
	st := open(t)
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
	if sizer := st.Services().IndexSize; sizer != nil {
		if n, err := sizer.IndexSize(ctx(t)); err != nil || n < 12 {
			t.Errorf("IndexSize = %d, %v; want at least the 12 messages stored", n, err)
		}
	}

	search := func(q loom.SearchQuery) []loom.SearchHit {
		t.Helper()
		q.UserID = "alice"
		hits, err := st.Search(ctx(t), q)
		if err != nil {
			t.Fatalf("search %q: %v", q.Text, err)
		}
		for i, h := range hits {
			if h.SessionID == bob.ID {
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
	tiers := func(hits []loom.SearchHit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, h.Tier)
		}
		return out
	}
	// Word forms: "register" is not "registry" to the engines' stemmers,
	// but they share a stem; the stop words need not be there.
	if hits := search(loom.SearchQuery{Text: "the register of chats"}); len(hits) == 0 || hits[0].Tier != loom.TierWordForms || hits[0].Seq != 1 {
		t.Fatalf("word forms: %+v", hits)
	}
	if hits := search(loom.SearchQuery{Text: "register chats", Exact: true}); len(hits) != 0 {
		t.Fatalf("exact search went on through the tiers: %+v", hits)
	}
	// Titles: a session whose title holds the words, after the messages
	// that do.
	hits := search(loom.SearchQuery{Text: "websocket storms"})
	if len(hits) < 2 || hits[0].Tier != loom.TierTitle || hits[0].SessionID != titled.ID ||
		!strings.Contains(hits[0].Snippet, loom.DefaultMarkStart+"Websocket"+loom.DefaultMarkEnd) ||
		hits[1].Tier != loom.TierAnyWord || hits[1].Seq != 2 {
		t.Fatalf("title tier: %+v", hits)
	}
	// Any word: the rarer word weighs more than a common one said often.
	if hits := search(loom.SearchQuery{Text: "common zebra"}); len(hits) != 7 || hits[0].Tier != loom.TierAnyWord || hits[0].Seq != 3 {
		t.Fatalf("any word, rarer first: %v %+v", tiers(hits), hits)
	}
	// Typos and prefixes of the rare words.
	if hits := search(loom.SearchQuery{Text: "websokcet"}); len(hits) == 0 || hits[0].Tier != loom.TierFuzzy || hits[0].Seq != 2 {
		t.Fatalf("typo tier: %+v", hits)
	}
	// A letter spelled the other side of the Atlantic is a typo too.
	if hits := search(loom.SearchQuery{Text: "dialyser"}); len(hits) == 0 || hits[0].Tier != loom.TierFuzzy || hits[0].SessionID != spelled.ID {
		t.Fatalf("typo tier, dialyser for dialyzer: %+v", hits)
	}
	if hits := search(loom.SearchQuery{Text: "reconnecting flakey"}); len(hits) == 0 || hits[0].Seq != 2 || hits[0].Tier == "" {
		t.Fatalf("typo and word form: %v %+v", tiers(hits), hits)
	}
	// The tiers fill a page in their order.
	hits = search(loom.SearchQuery{Text: "websocket chats zebra storms"})
	order := map[string]int{"": 0, loom.TierWordForms: 1, loom.TierTitle: 2, loom.TierAnyWord: 3, loom.TierFuzzy: 4}
	for i := 1; i < len(hits); i++ {
		if order[hits[i].Tier] < order[hits[i-1].Tier] {
			t.Fatalf("tiers out of order: %v", tiers(hits))
		}
	}
	if len(hits) != 4 {
		t.Fatalf("mixed query: %v %+v", tiers(hits), hits)
	}
	// Nothing to find stays empty, whatever the tiers.
	for _, q := range []string{"qwxzv", "the of and", "zzzzzzzzzzzz yyyyyyyyy"} {
		if hits := search(loom.SearchQuery{Text: q}); len(hits) != 0 {
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
		hits, err := st.Search(ctx(t), loom.SearchQuery{UserID: "alice", Text: q})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		return hits
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

// testSearchRareAmongCommon: a question whose one rare word is in an old
// message, and whose common word is in more newer messages than an
// engine ranks at once, finds the old message first (issue 82).
func testSearchRareAmongCommon(t *testing.T, open Opener) {
	RareAmongCommon(t, open(t), 2100)
}

// RareAmongCommon checks that one message "Audrey: I think positive
// reinforcement training is important for pets." followed by notes newer
// messages "Bob: I think so, note i." is the first of three hits for
// "Why does Audrey think reinforcement matters?": the rare words choose
// what is ranked, and "think", in every message, only adds to scores. No
// cap on how many matches are ranked may answer with the newest of them
// instead. The engines' tests call it with 200,000 notes too (PostgreSQL's
// as a benchmark).
func RareAmongCommon(t testing.TB, st loom.Store, notes int) {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newSession("alice", "cli:pets")
	s.Kind, s.MessageCount, s.TurnCount, s.CreatedAt, s.UpdatedAt = loom.KindMain, notes+1, notes+1, t0, t0.Add(time.Duration(notes)*time.Second)
	d := &loom.SessionData{Session: s}
	say := func(seq int, words string) {
		d.Messages = append(d.Messages, &loom.Message{ID: loom.NewID(), SessionID: s.ID, Seq: int64(seq), Role: loom.RoleUser, Turn: seq,
			Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: words}}, CreatedAt: t0.Add(time.Duration(seq) * time.Second)})
	}
	say(1, "Audrey: I think positive reinforcement training is important for pets.")
	for i := 1; i <= notes; i++ {
		say(i+1, fmt.Sprintf("Bob: I think so, note %d.", i))
	}
	c, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := st.Import(c, []*loom.SessionData{d}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []loom.SearchQuery{
		{Text: "Why does Audrey think reinforcement matters?", UserID: "alice", Limit: 3},
		{Text: "Why does Audrey think reinforcement matters?", UserID: "alice", Limit: 3, ProjectID: s.Project.ID},
		{Text: "audrey think", UserID: "alice", Limit: 3, AnyWord: true},
	} {
		// A search refused for running out of time (a busy machine) is
		// no answer, right or wrong: it is asked again.
		start := time.Now()
		hits, err := searchAgain(c, st, q)
		if err != nil {
			t.Fatalf("search %+v: %v", q, err)
		}
		t.Logf("search %q among %d: %v", q.Text, notes, time.Since(start))
		if len(hits) == 0 || hits[0].Seq != 1 {
			t.Fatalf("search %q among %d newer matches of a common word: first hit is not the rare word's message: %+v", q.Text, notes, hits)
		}
		for i, h := range hits {
			if i > 0 && h.Score > hits[i-1].Score {
				t.Fatalf("hits not best first: %+v", hits)
			}
		}
		if !strings.Contains(hits[0].Snippet, loom.DefaultMarkStart+"Audrey"+loom.DefaultMarkEnd) {
			t.Fatalf("snippet %q", hits[0].Snippet)
		}
	}
}

// testSearchWordsMeet: among the messages that hold some of a question's
// words, one in which several of them meet ranks above one that says a
// single word of it, however rare that word and however often said (a
// tool's log): the some-words tier weighs each message by the share of
// the question's words it holds (issue 82: recall across projects
// answered with such logs).
func testSearchWordsMeet(t *testing.T, open Opener) {
	t.Run("few matches", func(t *testing.T) { wordsMeet(t, open, 0) })
	// More matches than an engine ranks at once: the rare words select
	// the messages to rank, and the share is counted the same way.
	t.Run("more than the engines rank at once", func(t *testing.T) { wordsMeet(t, open, 2100) })
}

// wordsMeet is testSearchWordsMeet, with notes more messages holding
// one of the question's common words.
func wordsMeet(t *testing.T, open Opener, notes int) {
	st := open(t)
	s := newSession("alice", fmt.Sprintf("cli:ops-%d", notes))
	var msgs []*loom.Message
	for i := range notes {
		msgs = append(msgs, text(loom.RoleAssistant, fmt.Sprintf("Checked the nightly logs, note %d.", i)))
	}
	for i := range 24 {
		msgs = append(msgs,
			text(loom.RoleAssistant, fmt.Sprintf("Checked the nightly logs, run %d.", i)),
			text(loom.RoleAssistant, fmt.Sprintf("The backup finished, run %d.", i)),
			text(loom.RoleAssistant, fmt.Sprintf("Queued another job, run %d.", i)),
			text(loom.RoleAssistant, fmt.Sprintf("Disk usage is fine, run %d.", i)))
	}
	msgs = append(msgs,
		text(loom.RoleAssistant, "Queue: filled, filled, filled."),
		text(loom.RoleAssistant, "The nightly backup job ran again once we freed space on the disk."))
	mustAppend(t, st, s, msgs...)
	const question = "how did the nightly backup job recover after the disk filled up?"
	for _, q := range []loom.SearchQuery{
		{Text: question, UserID: "alice", Limit: 3},
		{Text: "nightly backup job recover disk filled", UserID: "alice", Limit: 3, AnyWord: true},
	} {
		hits, err := st.Search(ctx(t), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || !strings.Contains(hits[0].Snippet, "freed space") {
			t.Fatalf("search %q (any word %v, %d notes): the message where its words meet is not first: %+v", q.Text, q.AnyWord, notes, hits)
		}
	}
}

// searchAgain runs q on st, asked again when a busy machine refused it for time.
func searchAgain(c context.Context, st loom.Store, q loom.SearchQuery) ([]loom.SearchHit, error) {
	hits, err := st.Search(c, q)
	for try := 1; errors.Is(err, loom.ErrSearchTime) && try < 10; try++ {
		hits, err = st.Search(c, q)
	}
	return hits, err
}
