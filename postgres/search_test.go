package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/conformance"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/postgres"
)

func seeded(t testing.TB) *postgres.Store {
	t.Helper()
	st := open(t, freshSchema(t))
	s := &loom.Session{UserID: "alice", Key: "cli:api"}
	msgs := []*loom.Message{
		{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "How do I configure the postgres connection pool?"}}},
		{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "Set pool_size in config.toml; see https://example.com/docs and a@b.io, version 1.2.3."}}},
		{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "the and of to be"}}},
	}
	if err := st.Append(context.Background(), s, msgs...); err != nil {
		t.Fatal(err)
	}
	return st
}

func search(t *testing.T, st *postgres.Store, q loom.SearchQuery) []loom.SearchHit {
	t.Helper()
	q.UserID = "alice"
	hits, err := st.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("search %q: %v", q.Text, err)
	}
	return hits
}

// Stop words and punctuation make empty text-search queries: they match
// nothing and never fail.
func TestSearchEmptyQueries(t *testing.T) {
	t.Parallel()
	st := seeded(t)
	for _, q := range []string{"the", "the and of", `"to be"`, "...", "!!! ??? ---", "", " ", `"`, "&|!():*<->", "\x00", "\xff\xfe"} {
		if hits := search(t, st, loom.SearchQuery{Text: q}); len(hits) != 0 {
			t.Errorf("search %q = %+v, want no hits", q, hits)
		}
	}
	// A stop word next to a real word is dropped, not required.
	if hits := search(t, st, loom.SearchQuery{Text: "the pool"}); len(hits) != 2 {
		t.Errorf("search with a stop word = %d hits, want 2", len(hits))
	}
}

// Words joined by punctuation (file names, URLs, addresses, versions) are
// found word by word, as the query parser splits them, and snippets show
// the text as written.
func TestSearchPunctuation(t *testing.T) {
	t.Parallel()
	st := seeded(t)
	for _, q := range []string{"config", "toml", "config.toml", "pool_size", "size", "example", "docs", "b.io", "1.2.3", `"config toml"`} {
		hits := search(t, st, loom.SearchQuery{Text: q, Exact: true})
		if len(hits) != 1 || hits[0].Seq != 2 {
			t.Errorf("search %q = %+v, want message 2", q, hits)
		}
	}
	hits := search(t, st, loom.SearchQuery{Text: "toml", MarkStart: "[", MarkEnd: "]"})
	if len(hits) != 1 || !strings.Contains(hits[0].Snippet, "config.[toml];") {
		t.Fatalf("snippet = %+v", hits)
	}
	if strings.ContainsAny(hits[0].Snippet, "\x1f\x02\x03") {
		t.Fatalf("snippet keeps internal markers: %q", hits[0].Snippet)
	}
}

// A snippet shows a short message whole and marks what a long one leaves
// out with "…", as SQLite's snippets do.
func TestSnippets(t *testing.T) {
	t.Parallel()
	st := open(t, freshSchema(t))
	var long []string
	for i := range 80 {
		long = append(long, fmt.Sprintf("filler%d", i))
	}
	long[40] = "needle"
	s := &loom.Session{UserID: "alice", Key: "cli:x"}
	if err := st.Append(context.Background(), s,
		&loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "(short) message, with a needle!"}}},
		&loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: strings.Join(long, " ")}}},
	); err != nil {
		t.Fatal(err)
	}
	hits := search(t, st, loom.SearchQuery{Text: "needle"})
	if len(hits) != 2 {
		t.Fatalf("hits = %+v", hits)
	}
	for _, h := range hits {
		switch h.Seq {
		case 1:
			if h.Snippet != "(short) message, with a **needle**!" {
				t.Errorf("short snippet = %q", h.Snippet)
			}
		case 2:
			if !strings.HasPrefix(h.Snippet, "…") || !strings.HasSuffix(h.Snippet, "…") || !strings.Contains(h.Snippet, "**needle**") {
				t.Errorf("long snippet = %q", h.Snippet)
			}
		}
	}
}

// The largest queries loom.ParseQuery allows make tsqueries PostgreSQL
// takes: the most words, the longest phrase, the most phrases, the
// longest word.
func TestSearchLargestQueries(t *testing.T) {
	t.Parallel()
	st := seeded(t)
	many := make([]string, loom.MaxQueryWords)
	for i := range many {
		many[i] = fmt.Sprintf("w%d", i)
	}
	var phrases strings.Builder
	for i := range loom.MaxQueryWords / 2 {
		fmt.Fprintf(&phrases, `"pool w%d" `, i)
	}
	for _, q := range []string{strings.Join(many, " "), `"` + strings.Join(many, " ") + `"`, phrases.String(), strings.Repeat("x", loom.MaxQueryBytes)} {
		if _, err := st.Search(context.Background(), loom.SearchQuery{Text: q, UserID: "alice"}); err != nil {
			t.Errorf("search of %d bytes: %v", len(q), err)
		}
	}
	if hits := search(t, st, loom.SearchQuery{Text: "configure " + strings.Repeat("configure ", loom.MaxQueryWords)}); len(hits) != 1 {
		t.Errorf("repeated words = %+v", hits)
	}
}

func TestSearchRaw(t *testing.T) {
	t.Parallel()
	st := seeded(t)
	for _, q := range []string{"pool & (", "he said", "a &", "!", "<->", "pool:*Z", strings.Repeat("!", 63), strings.Repeat("!", 40) + "pool"} {
		_, err := st.Search(context.Background(), loom.SearchQuery{Text: q, Raw: true, UserID: "alice"})
		if loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("raw %q = %v, want an invalid-input error", q, err)
		}
	}
	if hits := search(t, st, loom.SearchQuery{Text: "configur:* & !kubernetes", Raw: true}); len(hits) != 1 || hits[0].Seq != 1 {
		t.Fatalf("raw query = %+v", hits)
	}
	if hits := search(t, st, loom.SearchQuery{Text: "pool <-> size", Raw: true}); len(hits) != 1 || hits[0].Seq != 2 {
		t.Fatalf("raw phrase = %+v", hits)
	}
}

// An every-word query matching more than RankDepth messages ranks the
// newest of them and says its answer is partial, as on SQLite.
func TestBroadSearchPartial(t *testing.T) {
	t.Parallel()
	storetest.BroadSearchPartial(t, open(t, freshSchema(t)), postgres.RankDepth)
}

// A question's rare word finds its message first among 200,000 newer
// messages of its common word, as on SQLite (the conformance suite runs
// it with 2,100 on every engine), in loom search and in loom recall.
// Its store takes 20-30 s to fill: -short leaves it out.
func TestRareAmongCommon(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a store of 200,000 messages")
	}
	t.Parallel()
	conformance.RareAmongCommon(t, open(t, freshSchema(t)), 200_000)
}

// A user whose matches are few among many of another user's finds them,
// whether or not the query is broad for the store as a whole.
func TestSearchFewAmongMany(t *testing.T) {
	t.Parallel()
	storetest.SearchFewAmongMany(t, open(t, freshSchema(t)), postgres.RankDepth+100)
}
