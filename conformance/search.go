package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/snippet"
)

// §3.6: every word must appear, quoted parts as phrases, operators and
// punctuation are text, results best first with marked snippets, filters.
func testSearch(t *testing.T, open Opener) {
	f := newSearchFixture(t, open(t))
	inOrder(t, f.ranked, f.words, f.filters, f.newest, f.forks, f.markersAndTrash)
}

// searchFixture is testSearch's store: alice's sessions a (in a project)
// and b (in none), and bob's one session.
type searchFixture struct {
	st        loom.Store
	a, b, bob *loom.Session
}

func newSearchFixture(t *testing.T, st loom.Store) *searchFixture {
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
	return &searchFixture{st: st, a: a, b: b, bob: bob}
}

// search runs q as alice unless q names its user.
func (f *searchFixture) search(t *testing.T, q loom.SearchQuery) []loom.SearchHit {
	t.Helper()
	return searchAs(t, f.st, q)
}

// searchAs runs q on st as alice unless q names its user; an error ends
// the test.
func searchAs(t *testing.T, st loom.Store, q loom.SearchQuery) []loom.SearchHit {
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

// ranked: every word's hits, best first, alice's only, complete, the
// densest message first with its match marked.
func (f *searchFixture) ranked(t *testing.T) {
	// A page is filled from the tiers after the hits of every word
	// (testSearchTiers); an exact search keeps to those.
	hits := f.search(t, loom.SearchQuery{Text: "postgres pool connection", Exact: true})
	if len(hits) != 3 {
		t.Fatalf("all-words search found %d hits: %+v", len(hits), hits)
	}
	for i, h := range hits {
		if h.SessionID == f.bob.ID {
			t.Fatalf("alice's search returned bob's message")
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Fatalf("hits not best first: %+v", hits)
		}
		if h.MessageID == "" || h.Seq == 0 || h.Role == "" || h.CreatedAt.IsZero() {
			t.Fatalf("incomplete hit %+v", h)
		}
	}
	if hits[0].SessionID != f.b.ID || hits[0].Seq != 2 {
		t.Fatalf("densest message not ranked first: %+v", hits[0])
	}
	if !strings.Contains(hits[0].Snippet, loom.DefaultMarkStart+"pool"+loom.DefaultMarkEnd) {
		t.Fatalf("snippet does not mark the match: %q", hits[0].Snippet)
	}
}

// words: stems, every word, phrases, tool parts, operators as text.
func (f *searchFixture) words(t *testing.T) {
	// Porter stemming: "configuring" finds "configure".
	if hits := f.search(t, loom.SearchQuery{Text: "configuring", Exact: true}); len(hits) != 1 || hits[0].Seq != 1 {
		t.Fatalf("stemmed search = %+v", hits)
	}
	// Every word must appear in an exact search; a plain one falls back
	// to messages with some of them, marked so (testSearchAnyWord).
	if hits := f.search(t, loom.SearchQuery{Text: "postgres kubernetes", Exact: true}); len(hits) != 0 {
		t.Fatalf("search matched a message lacking a word: %+v", hits)
	}
	for _, h := range f.search(t, loom.SearchQuery{Text: "postgres kubernetes"}) {
		if h.Tier != loom.TierAnyWord {
			t.Fatalf("a hit lacking a word is not marked: %+v", h)
		}
	}
	// A quoted part is a phrase.
	if hits := f.search(t, loom.SearchQuery{Text: `"pool size"`, Exact: true}); len(hits) != 1 || hits[0].Seq != 2 {
		t.Fatalf("phrase search = %+v", hits)
	}
	if hits := f.search(t, loom.SearchQuery{Text: `"size pool"`, Exact: true}); len(hits) != 0 {
		t.Fatalf("reversed phrase matched: %+v", hits)
	}
	// Tool inputs and outputs are searched.
	if hits := f.search(t, loom.SearchQuery{Text: "kubernetes replicas", Exact: true}); len(hits) != 1 || hits[0].Seq != 3 {
		t.Fatalf("tool search = %+v", hits)
	}
	// Operator words and punctuation are literal text, never an error.
	for _, q := range []string{`he said "hi" AND (NEAR* -x`, `AND`, `OR NOT`, `"`, `NEAR(`, `*`, `-`, `:`, `a:b`, `col:x`, `(((`, `^`, `'`, `""`, `   `, `🙂`, `x"y"z"`, `NEAR(a b, 3)`, `{a b}`, `a + b`} {
		if _, err := f.st.Search(ctx(t), loom.SearchQuery{Text: q, UserID: "alice"}); err != nil {
			t.Fatalf("search %q failed: %v", q, err)
		}
	}
	if hits := f.search(t, loom.SearchQuery{Text: `he said "hi" AND (NEAR* -x`, Exact: true}); len(hits) != 1 || hits[0].Seq != 4 {
		t.Fatalf("literal operators search = %+v", hits)
	}
}

// filters: session, surface, project, role, time, limit, user.
func (f *searchFixture) filters(t *testing.T) {
	a := f.a
	if hits := f.search(t, loom.SearchQuery{Text: "postgres", SessionID: a.ID}); len(hits) != 1 || hits[0].SessionID != a.ID {
		t.Fatalf("session filter = %+v", hits)
	}
	if hits := f.search(t, loom.SearchQuery{Text: "postgres", Surface: "telegram"}); len(hits) != 2 {
		t.Fatalf("surface filter = %+v", hits)
	}
	if hits := f.search(t, loom.SearchQuery{Text: "postgres", ProjectID: a.Project.ID}); len(hits) != 1 {
		t.Fatalf("project filter = %+v", hits)
	}
	if hits := f.search(t, loom.SearchQuery{Text: "postgres", Role: loom.RoleAssistant}); len(hits) != 1 || hits[0].Role != loom.RoleAssistant {
		t.Fatalf("role filter = %+v", hits)
	}
	if hits := f.search(t, loom.SearchQuery{Text: "postgres", Since: time.Now().Add(time.Hour)}); len(hits) != 0 {
		t.Fatalf("time filter = %+v", hits)
	}
	if hits := f.search(t, loom.SearchQuery{Text: "postgres", Until: time.Now().Add(time.Hour)}); len(hits) != 3 {
		t.Fatalf("until filter = %+v", hits)
	}
	if hits := f.search(t, loom.SearchQuery{Text: "postgres", Limit: 1}); len(hits) != 1 {
		t.Fatalf("limit = %d hits", len(hits))
	}
	if hits := f.search(t, loom.SearchQuery{Text: "secrets", UserID: "bob"}); len(hits) != 1 {
		t.Fatalf("bob's own search = %+v", hits)
	}
}

// newest: the newest matches only (what a search falls back to when
// ranking runs out of time): newest first, best-first scores, marked
// partial, filtered and limited as any search.
func (f *searchFixture) newest(t *testing.T) {
	a, b := f.a, f.b
	// The newest, c's, is the one ranked last.
	c := newSession("alice", "cli:notes")
	mustAppend(t, f.st, c, text(loom.RoleUser, strings.Repeat("a long note about many other things, ", 40)+"and postgres once"))
	if hits := f.search(t, loom.SearchQuery{Text: "postgres"}); len(hits) != 4 || hits[3].SessionID != c.ID || loom.Partial(hits) {
		t.Fatalf("ranked matches = %+v", hits)
	}
	newest := f.search(t, loom.SearchQuery{Text: "postgres", Newest: true})
	if len(newest) != 4 || newest[0].SessionID != c.ID || newest[1].SessionID != b.ID || newest[1].Seq != 2 || newest[2].SessionID != b.ID || newest[3].SessionID != a.ID || !loom.Partial(newest) {
		t.Fatalf("newest matches = %+v", newest)
	}
	for i, h := range newest {
		if !h.Partial || (i > 0 && h.Score > newest[i-1].Score) || !strings.Contains(h.Snippet, loom.DefaultMarkStart+"postgres"+loom.DefaultMarkEnd) {
			t.Fatalf("newest matches: hit %d = %+v", i, h)
		}
	}
	if hits := f.search(t, loom.SearchQuery{Text: "postgres", Newest: true, Limit: 1}); len(hits) != 1 || hits[0].MessageID != newest[0].MessageID {
		t.Fatalf("newest match, limit 1 = %+v", hits)
	}
	if hits := f.search(t, loom.SearchQuery{Text: "postgres", Newest: true, SessionID: a.ID}); len(hits) != 1 || hits[0].SessionID != a.ID {
		t.Fatalf("newest matches in one session = %+v", hits)
	}
	if hits := f.search(t, loom.SearchQuery{Text: "secrets", Newest: true}); len(hits) != 0 {
		t.Fatalf("alice's newest matches hold bob's: %+v", hits)
	}
}

// forks: a message a fork inherited is one hit, naming the fork; the
// fork's own messages are hits of their own.
func (f *searchFixture) forks(t *testing.T) {
	st, a := f.st, f.a
	fk, err := st.Fork(ctx(t), a.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, fk, text(loom.RoleUser, "kubernetes again, in the fork"))
	hits := f.search(t, loom.SearchQuery{Text: "kubernetes"})
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
	if hits := f.search(t, loom.SearchQuery{Text: "kubernetes", Limit: 1}); len(hits) != 1 {
		t.Fatalf("limit 1 over a fork = %+v", hits)
	}
	if _, err := st.Delete(ctx(t), fk.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
}

// markersAndTrash: custom markers (the dashboard uses its own); trashed
// sessions are not searched.
func (f *searchFixture) markersAndTrash(t *testing.T) {
	if hits := f.search(t, loom.SearchQuery{Text: "kubernetes", MarkStart: "<b>", MarkEnd: "</b>"}); len(hits) != 1 || !strings.Contains(hits[0].Snippet, "<b>kubernetes</b>") {
		t.Fatalf("custom markers: %+v", hits)
	}
	if _, err := f.st.Delete(ctx(t), f.b.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if hits := f.search(t, loom.SearchQuery{Text: "tuning"}); len(hits) != 0 {
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

// searchAgain runs q on st, asked again when a busy machine refused it for time.
func searchAgain(c context.Context, st loom.Store, q loom.SearchQuery) ([]loom.SearchHit, error) {
	hits, err := st.Search(c, q)
	for try := 1; errors.Is(err, loom.ErrSearchTime) && try < 10; try++ {
		hits, err = st.Search(c, q)
	}
	return hits, err
}
