package loom

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
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
