package snippet

import (
	"fmt"
	"strings"
	"testing"
)

func TestMake(t *testing.T) {
	long := strings.Repeat("filler words here ", 20) + "we configured the postgres connection pool yesterday " + strings.Repeat("more filler text ", 20)
	for _, tc := range []struct {
		name, query, text, want string
	}{
		{"short text whole", "pool", "Set the pool size.", "Set the [pool] size."},
		{"stemming", "configuring", "I configured it", "I [configured] it"},
		{"case", "POSTGRES", "use Postgres here", "use [Postgres] here"},
		{"phrase words", `"pool size"`, "the pool size is 10", "the [pool] [size] is 10"},
		{"no match keeps the start", "zebra", "one two three", "one two three"},
		{"operators are text", `he said "hi" AND (NEAR* -x`, `he said "hi" AND (NEAR* -x`, `[he] [said] "[hi]" [AND] ([NEAR]* -[x]`},
		{"unicode", "ünïcödé", "some ünïcödé text", "some [ünïcödé] text"},
		{"new lines fold", "b", "a\n\nb\nc", "a [b] c"},
		{"a whole text keeps its edges", "needle", "(short) message, with a needle!", "(short) message, with a [needle]!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewMatcher(tc.query).Make(tc.text, "[", "]"); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	got := NewMatcher("postgres pool").Make(long, "[", "]")
	if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || !strings.Contains(got, "[postgres] connection [pool]") {
		t.Fatalf("window = %q", got)
	}
	if n := len(strings.Fields(got)); n > Words+2 {
		t.Fatalf("snippet has %d words", n)
	}
}

func TestMakeWindow(t *testing.T) {
	m := NewMatcher("needle")
	for _, tc := range []struct {
		name string
		w    Window
		want string
	}{
		{"whole", Window{Text: "a needle here"}, "a [needle] here"},
		{"cut at the start", Window{Text: "dle, then a needle here", Head: true}, "…then a [needle] here"},
		{"cut at the end", Window{Text: "a needle and a hayst", Tail: true}, "a [needle] and a…"},
		{"cut at both", Window{Text: "xx needle yy", Head: true, Tail: true}, "…[needle]…"},
		{"nothing left", Window{Text: "abc", Head: true, Tail: true}, "…"},
	} {
		if got := m.MakeWindow(tc.w, "[", "]"); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	// A window of a long text gives the snippet the whole text gives, when
	// it holds the words around the match.
	var words []string
	for i := range 400 {
		words = append(words, fmt.Sprintf("filler%d", i))
	}
	words[200] = "needle"
	text := strings.Join(words, " ")
	from := strings.Index(text, "filler150")
	w := Window{Text: text[from-3 : from+1200], Head: true, Tail: true}
	if got, want := m.MakeWindow(w, "[", "]"), m.Make(text, "[", "]"); got != want {
		t.Fatalf("window snippet %q, whole text %q", got, want)
	}
}

func FuzzMake(f *testing.F) {
	f.Add("pool", "the pool")
	f.Add(`"a b"`, "a\nb\x00c")
	f.Fuzz(func(t *testing.T, q, text string) {
		m := NewMatcher(q)
		m.Make(text, "<", ">")
		m.MakeWindow(Window{Text: text, Head: true, Tail: true}, "<", ">")
	})
}
