package semantic_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/embedding"
	"github.com/loomhq/loom/embedding/embeddingtest"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/semantic"
)

func hit(id string) loom.SearchHit { return loom.SearchHit{SessionID: "s", MessageID: id} }

func ids(hits []loom.SearchHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.MessageID
	}
	return out
}

// Reciprocal rank fusion: a message in both rankings comes before one
// in either; equal scores keep the keyword ranking's order first.
func TestFuseOrder(t *testing.T) {
	keyword := []loom.SearchHit{hit("a"), hit("b"), hit("c")}
	meaning := []loom.SearchHit{hit("x"), hit("c"), hit("a")}
	got := semantic.Fuse(keyword, meaning, 10)
	// a: 1/61+1/63, c: 1/63+1/62, b: 1/62, x: 1/61.
	want := []string{"a", "c", "x", "b"}
	if !slices.Equal(ids(got), want) {
		t.Errorf("fused %v, want %v", ids(got), want)
	}
	if got[0].Score <= got[1].Score || got[2].Score <= got[3].Score {
		t.Errorf("scores not best first: %v", got)
	}
	if n := len(semantic.Fuse(keyword, meaning, 2)); n != 2 {
		t.Errorf("limit 2 gave %d hits", n)
	}
	// Ties: b (keyword rank 2) and y (meaning rank 2) score the same.
	tie := semantic.Fuse([]loom.SearchHit{hit("a"), hit("b")}, []loom.SearchHit{hit("x"), hit("y")}, 10)
	if !slices.Equal(ids(tie), []string{"a", "x", "b", "y"}) {
		t.Errorf("ties ordered %v, want a x b y", ids(tie))
	}
}

// A search through the fake embeddings server: keyword hits and meaning
// hits fused, in the same order every time; --keyword and --semantic
// each give their own ranking.
func TestSearchFusesKeywordAndMeaning(t *testing.T) {
	texts := []string{
		"the ActiveSessionRegistry tracks which sessions are still running",
		"deploy the website with rsync over ssh",
		"postgres connection refused on port 5432",
		"chats in progress are remembered by the registry of running sessions",
		"remember to water the plants",
		"a flaky test in the retry loop",
	}
	st, _ := newStore(t, texts...)
	s := embedAll(t, st)
	q := loom.SearchQuery{Text: "which chats are still running", UserID: "local", Limit: 4}
	search := func(mode semantic.Mode) []loom.SearchHit {
		t.Helper()
		res, err := s.Search(t.Context(), q, mode)
		if err != nil {
			t.Fatal(err)
		}
		return res.Hits
	}
	snippets := func(hits []loom.SearchHit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, strings.NewReplacer("**", "").Replace(h.Snippet))
		}
		return out
	}
	fused := search(semantic.Fused)
	if len(fused) == 0 {
		t.Fatal("no hits")
	}
	for range 5 {
		if again := search(semantic.Fused); !slices.Equal(ids(again), ids(fused)) {
			t.Fatalf("the same search ranked %v, then %v", snippets(fused), snippets(again))
		}
	}
	keyword := search(semantic.Keyword)
	meaning := search(semantic.Meaning)
	want := semantic.Fuse(keyword, meaning, 4)
	if !slices.Equal(ids(fused), ids(want)) {
		t.Errorf("fused %v, want the fusion of keyword %v and meaning %v", snippets(fused), snippets(keyword), snippets(meaning))
	}
	// The registry messages share words with the query, the plants one
	// none: meaning ranks them first, and never the plants.
	if !strings.Contains(snippets(meaning)[0], "running") {
		t.Errorf("meaning ranked %v first", snippets(meaning)[0])
	}
	for _, h := range meaning {
		if h.Tier != loom.TierMeaning {
			t.Errorf("a hit by meaning has tier %q", h.Tier)
		}
	}
	// Without a client, a search ranks by keywords and refuses meaning.
	plain := &semantic.Searcher{Store: st}
	res, err := plain.Search(t.Context(), q, semantic.Fused)
	if err != nil || res.ByMeaning || !slices.Equal(ids(res.Hits), ids(keyword)) {
		t.Errorf("without embeddings: %v %v, want the keyword hits", res, err)
	}
	if _, err := plain.Search(t.Context(), q, semantic.Meaning); err == nil {
		t.Error("search by meaning without embeddings did not fail")
	}
}

// embedAll embeds st's messages with a fake embeddings server and
// returns a searcher of st that embeds its queries there.
func embedAll(t *testing.T, st loom.VectorStore) *semantic.Searcher {
	t.Helper()
	srv := embeddingtest.New()
	t.Cleanup(srv.Close)
	client := embedding.New(srv.URL+"/v1", "test-embed", "")
	if _, err := (&semantic.Embedder{Store: st, Client: client}).Run(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	return &semantic.Searcher{Store: st.(loom.Store), Client: client}
}

// A searcher through a secrets gate (as the MCP tools of loom serve
// search) ranks by the index of the searcher it was made from, and its
// hits, by keywords and by meaning, come with their snippets and titles
// made from the redacted text.
func TestSearchThroughAGate(t *testing.T) {
	key := "ghp_" + strings.Repeat("Zq7", 12)
	st, _ := newStore(t,
		"the deploy token is "+key+" for the registry",
		"chats in progress are remembered by the registry of running sessions",
		"remember to water the plants")
	s := embedAll(t, st)
	if s.Through(s.Store) != s {
		t.Error("a searcher through its own store is not itself")
	}
	via := s.Through(secrets.Default().Gate(s.Store))
	for _, mode := range []semantic.Mode{semantic.Fused, semantic.Keyword, semantic.Meaning} {
		res, err := via.Search(t.Context(), loom.SearchQuery{Text: "deploy token registry", UserID: "local", Limit: 5}, mode)
		if err != nil {
			t.Fatal(err)
		}
		marked := false
		for _, h := range res.Hits {
			shown := strings.ReplaceAll(h.Snippet, "**", "") + h.SessionTitle
			if strings.Contains(shown, key[:12]) || strings.Contains(shown, key[12:]) {
				t.Errorf("mode %d: a hit through the gate holds the key: %q", mode, shown)
			}
			marked = marked || strings.Contains(shown, "[REDACTED:github-token]")
		}
		if !marked {
			t.Errorf("mode %d: no hit shows the marker: %+v", mode, res.Hits)
		}
	}
}

// A message that holds every word of the query is never ranked below
// one that does not, however the ranking by meaning puts them: "merge it
// into TranscriptHighlighter" once came third, behind two word-form hits
// that meaning ranked first and second.
func TestFuseKeepsEveryWordFirst(t *testing.T) {
	verbatim := hit("verbatim")
	forms := []loom.SearchHit{hit("merging"), hit("merged")}
	for i := range forms {
		forms[i].Tier = loom.TierWordForms
	}
	keyword := append([]loom.SearchHit{verbatim}, forms...)
	meaning := []loom.SearchHit{forms[0], forms[1], hit("other")}
	for i := range meaning {
		meaning[i].Tier = loom.TierMeaning
	}
	got := semantic.Fuse(keyword, meaning, 10)
	if want := []string{"verbatim", "merging", "merged", "other"}; !slices.Equal(ids(got), want) {
		t.Errorf("fused %v, want %v", ids(got), want)
	}
	if got[0].Tier != "" || got[1].Tier != loom.TierWordForms {
		t.Errorf("tiers %+v", got)
	}
}
