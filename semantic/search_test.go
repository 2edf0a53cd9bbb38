package semantic_test

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

// Fusion: the keyword ranking's first hit stays first; where meaning
// agrees with the keywords no more than chance (these short rankings),
// the keyword order stands and what meaning alone found follows, best
// first; ties keep the keyword ranking's order.
func TestFuseOrder(t *testing.T) {
	some := func(id string) loom.SearchHit { h := hit(id); h.Tier = loom.TierAnyWord; return h }
	keyword := []loom.SearchHit{some("a"), some("b"), some("c")}
	meaning := []loom.SearchHit{hit("x"), hit("c"), hit("a"), hit("y")}
	got := semantic.Fuse(keyword, meaning, 10)
	want := []string{"a", "b", "c", "x", "y"}
	if !slices.Equal(ids(got), want) {
		t.Errorf("fused %v, want %v", ids(got), want)
	}
	if n := len(semantic.Fuse(keyword, meaning, 2)); n != 2 {
		t.Errorf("limit 2 gave %d hits", n)
	}
	// Where the two agree (most of their first messages shared), a
	// message both put high comes before ones the keywords put higher.
	var kw, mn []loom.SearchHit
	for i := range 40 {
		kw = append(kw, some(fmt.Sprint("m", i)))
	}
	// Meaning puts m5 first and leaves m1 out: m5 moves up past m1, m3
	// and m4.
	mn = append(mn, kw[5], kw[0])
	for i := 2; i < 20; i++ {
		if i != 5 {
			mn = append(mn, kw[i])
		}
	}
	got = semantic.Fuse(kw, mn, 3)
	if want := []string{"m0", "m2", "m5"}; !slices.Equal(ids(got), want) {
		t.Errorf("fused with agreement %v, want %v", ids(got), want)
	}
}

// realTexts are the prompts and replies of a real Claude Code session
// (testdata), and the first of its prompts.
func realTexts(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "agent-sessions", "claude-code", "spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, line := range strings.Split(string(b), "\n") {
		var l struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(line), &l) != nil || (l.Type != "user" && l.Type != "assistant") {
			continue
		}
		var one string
		var parts []struct{ Type, Text string }
		switch {
		case json.Unmarshal(l.Message.Content, &one) == nil:
		case json.Unmarshal(l.Message.Content, &parts) == nil:
			for _, p := range parts {
				if p.Type == "text" {
					one += p.Text
				}
			}
		}
		if len(strings.Fields(one)) >= 4 && !slices.Contains(texts, one) {
			texts = append(texts, one)
		}
	}
	if len(texts) < 40 {
		t.Fatalf("%d texts in the real session", len(texts))
	}
	return texts
}

// unrelatedServer is an embeddings server whose vectors are drawn at
// random from each text's hash: an embedder that knows nothing.
func unrelatedServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i, text := range req.Input {
			h := fnv.New64a()
			h.Write([]byte(text))
			rnd := rand.New(rand.NewPCG(h.Sum64(), 1))
			v := make([]float32, 64)
			for j := range v {
				v[j] = float32(rnd.NormFloat64())
			}
			out.Data = append(out.Data, item{i, v})
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// An embedder that knows nothing of the text makes fused ranking no
// worse than keywords: the fused hits start with the keyword hits, in
// their order. Before, reciprocal rank fusion gave it an equal vote, and
// on LoCoMo such an embedder took hit@1 from 72.1% to 43.8%.
func TestFuseUnrelatedEmbedderKeepsKeywordOrder(t *testing.T) {
	st, _ := newStore(t, realTexts(t)...)
	client := embedding.New(unrelatedServer(t).URL+"/v1", "unrelated", "")
	if _, err := (&semantic.Embedder{Store: st, Client: client}).Run(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	s := &semantic.Searcher{Store: st, Client: client}
	for _, text := range []string{"push the branch", "hook output contract", "close the task in beads", "run the tests again"} {
		q := loom.SearchQuery{Text: text, UserID: "local", Limit: 10}
		kw, err := s.Search(t.Context(), q, semantic.Keyword)
		if err != nil {
			t.Fatal(err)
		}
		fused, err := s.Search(t.Context(), q, semantic.Fused)
		if err != nil || !fused.ByMeaning {
			t.Fatalf("fused %q: %+v, %v", text, fused, err)
		}
		if n := len(kw.Hits); n == 0 || !slices.Equal(ids(fused.Hits[:n]), ids(kw.Hits)) {
			t.Errorf("%q fused with an unrelated embedder %v, want the keyword hits %v first", text, ids(fused.Hits), ids(kw.Hits))
		}
	}
}

// The fused order does not depend on the limit: each page is the first
// of the same ranking. Before, each ranking was cut to the limit before
// fusing, and the message holding every content word of a LoCoMo
// question came 7th at -L 20 and 1st at -L 10.
func TestFusedOrderIndependentOfLimit(t *testing.T) {
	st, _ := newStore(t, realTexts(t)...)
	s := embedAll(t, st)
	for _, text := range []string{"push the branch to origin", "hook output contract for session start", "close the task"} {
		q := loom.SearchQuery{Text: text, UserID: "local", Limit: semantic.FuseDepth}
		all, err := s.Search(t.Context(), q, semantic.Fused)
		if err != nil || len(all.Hits) < 10 {
			t.Fatalf("%q: %d hits, %v", text, len(all.Hits), err)
		}
		for limit := 1; limit <= 20; limit++ {
			q.Limit = limit
			page, err := s.Search(t.Context(), q, semantic.Fused)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(page.Hits), ids(all.Hits[:min(limit, len(all.Hits))])) {
				t.Fatalf("%q at limit %d: %v, want the first %d of %v", text, limit, ids(page.Hits), limit, ids(all.Hits))
			}
		}
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
	q.Limit = semantic.FuseDepth
	want := semantic.Fuse(search(semantic.Keyword), search(semantic.Meaning), 4)
	q.Limit = 4
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
func embedAll(t *testing.T, st loom.Engine) *semantic.Searcher {
	t.Helper()
	srv := embeddingtest.New()
	t.Cleanup(srv.Close)
	client := embedding.New(srv.URL+"/v1", "test-embed", "")
	if _, err := (&semantic.Embedder{Store: st.Optional().Vectors, Client: client}).Run(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	return &semantic.Searcher{Store: st, Client: client}
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
