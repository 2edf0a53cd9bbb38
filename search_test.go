package loom

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseQuery(t *testing.T) {
	word := func(w string) Term { return Term{Words: []string{w}} }
	for _, tc := range []struct {
		query string
		want  []Term
	}{
		{"pool size", []Term{word("pool"), word("size")}},
		{`"pool size" config`, []Term{{Words: []string{"pool", "size"}, Phrase: true}, word("config")}},
		{`he said "hi" AND (NEAR* -x`, []Term{word("he"), word("said"), word("hi"), word("AND"), word("NEAR"), word("x")}},
		{`"unterminated phrase`, []Term{word("unterminated"), word("phrase")}},
		// A word or phrase given again, in any case, is kept once.
		{"pool Pool POOL size pool", []Term{word("pool"), word("size")}},
		{`"a b" "A B" a "b a"`, []Term{{Words: []string{"a", "b"}, Phrase: true}, word("a"), {Words: []string{"b", "a"}, Phrase: true}}},
		{strings.Repeat("the ", MaxQueryBytes/4), []Term{word("the")}},
		{"", nil},
		{`" - *`, nil},
	} {
		got, err := ParseQuery(tc.query)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseQuery(%.40q) = %v, %v; want %v", tc.query, got, err, tc.want)
		}
	}
}

func TestQueryLimits(t *testing.T) {
	distinct := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = fmt.Sprintf("w%d", i)
		}
		return strings.Join(ws, " ")
	}
	for _, tc := range []struct {
		name string
		q    SearchQuery
		ok   bool
	}{
		{"most words", SearchQuery{Text: distinct(MaxQueryWords)}, true},
		{"one word too many", SearchQuery{Text: distinct(MaxQueryWords + 1)}, false},
		{"words of a phrase count", SearchQuery{Text: `"` + distinct(MaxQueryWords+1) + `"`}, false},
		{"longest text", SearchQuery{Text: strings.Repeat("a", MaxQueryBytes)}, true},
		{"one byte too long", SearchQuery{Text: strings.Repeat("a", MaxQueryBytes+1)}, false},
		{"pasted page", SearchQuery{Text: strings.Repeat("a long pasted page ", 2000)}, false},
		{"raw: most words", SearchQuery{Text: distinct(MaxQueryWords/2) + " OR " + distinct(MaxQueryWords/2-1), Raw: true}, true},
		{"raw: repeats count", SearchQuery{Text: strings.TrimSpace(strings.Repeat("a ", MaxQueryWords+1)), Raw: true}, false},
		{"raw: too long", SearchQuery{Text: strings.Repeat("a", MaxQueryBytes+1), Raw: true}, false},
	} {
		_, err := tc.q.Terms()
		if tc.ok != (err == nil) {
			t.Errorf("%s: Terms() = %v", tc.name, err)
			continue
		}
		if err != nil {
			if ErrorCode(err) != EINVALID || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "at most") {
				t.Errorf("%s: error %q is not a one-line invalid-input error naming the limit", tc.name, err)
			}
		}
	}
}

// A search that runs out of time is refused; one whose caller gives up
// ends with the caller's error.
func TestRunSearch(t *testing.T) {
	slow := func(ctx context.Context, _ []Term) ([]SearchHit, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("search: %w", ctx.Err())
	}
	start := time.Now()
	_, err := RunSearch(context.Background(), SearchQuery{Text: "slow"}, slow)
	if ErrorCode(err) != EINVALID || !errors.Is(err, ErrSearchTime) || !strings.Contains(ErrorMessage(err), "fewer or rarer words") {
		t.Fatalf("a search out of time = %v, want an invalid-input error", err)
	}
	if d := time.Since(start); d < MaxSearchTime {
		t.Fatalf("search stopped after %v, before its time ran out", d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	if _, err := RunSearch(ctx, SearchQuery{Text: "slow"}, slow); !errors.Is(err, context.Canceled) || ErrorCode(err) != EINTERNAL {
		t.Fatalf("a cancelled search = %v, want the context's error", err)
	}

	// A query over the limits never reaches the engine.
	_, err = RunSearch(context.Background(), SearchQuery{Text: strings.Repeat("x ", MaxQueryBytes)}, func(context.Context, []Term) ([]SearchHit, error) {
		t.Fatal("search ran a refused query")
		return nil, nil
	})
	if ErrorCode(err) != EINVALID {
		t.Fatalf("a query over the limits = %v", err)
	}
	var got []Term
	RunSearch(context.Background(), SearchQuery{Text: "pool pool size"}, func(_ context.Context, terms []Term) ([]SearchHit, error) {
		got = terms
		return nil, nil
	})
	if len(got) != 2 {
		t.Fatalf("search was given terms %v", got)
	}
}
