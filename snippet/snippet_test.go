package snippet

import (
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

func FuzzMake(f *testing.F) {
	f.Add("pool", "the pool")
	f.Add(`"a b"`, "a\nb\x00c")
	f.Fuzz(func(t *testing.T, q, text string) {
		NewMatcher(q).Make(text, "<", ">")
	})
}
