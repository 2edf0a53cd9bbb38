package snippet

import (
	"fmt"
	"runtime"
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
		{"operators are text", `he said "hi" AND (NEAR* -x`, `he said "hi" AND (NEAR* -x`, `he [said] "[hi]" AND ([NEAR]* -[x]`},
		{"stop words unmarked", "which chats are in progress", "the chats are in progress", "the [chats] are in [progress]"},
		{"stop words alone marked", "the of", "most of the time", "most [of] [the] time"},
		{"unicode", "ünïcödé", "some ünïcödé text", "some [ünïcödé] text"},
		{"new lines fold", "b", "a\n\nb\nc", "a [b] c"},
		{"a whole text keeps its edges", "needle", "(short) message, with a needle!", "(short) message, with a [needle]!"},
		{"a redaction's marker is no text", "authorization bearer token", "Authorization: Bearer [REDACTED:authorization-header] and token[REDACTED:bearer-token]",
			"[Authorization]: [Bearer] [REDACTED:authorization-header] and [token][REDACTED:bearer-token]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewMatcher(tc.query).Make(tc.text, "[", "]"); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	// The window is cut around the rarer word, not the stop words
	// matched many times before it.
	stops := strings.Repeat("we are in it and they are in too ", 6) + "the websocket reconnect loop " + strings.Repeat("filler ", 30)
	if got := NewMatcher("are in websocket").Make(stops, "[", "]"); !strings.Contains(got, "[websocket]") || strings.Contains(got, "[are]") {
		t.Errorf("stop words: %q", got)
	}
	rare := strings.Repeat("the config value ", 10) + strings.Repeat("filler ", 30) + "and the websocket handshake " + strings.Repeat("filler ", 30)
	if got := NewMatcher("config websocket").Make(rare, "[", "]"); !strings.Contains(got, "[websocket]") {
		t.Errorf("rarer word: %q", got)
	}
	// Matches repeated so often that they fill a window: it is cut from
	// a little before the shortest run that holds each matched word,
	// and shows what follows, the value of the port.
	script := "#!/bin/sh\n# the review hook\nif [ \"${SPOTTER_REVIEW_MODE:-}\" != \"1\" ]; then\n  exit 0\nfi\n" +
		"TOKEN=\"${SPOTTER_REVIEW_TOKEN:-}\"\nif [ -z \"$TOKEN\" ]; then\n  exit 0\nfi\n# Determine port\nPORT=\"${SPOTTER_PORT:-1100}\"\n" +
		"# Fetch review context (fail silently)\nRESPONSE=\"$(curl -s \"http://127.0.0.1:${PORT}/api/review-context/$TOKEN\")\"\n" + strings.Repeat("echo done\n", 30)
	if got := NewMatcher("which port does the spotter server use").Make(script, "[", "]"); !strings.Contains(got, "1100") {
		t.Errorf("the port's value: %q", got)
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
	// A text read in part gives the snippet the whole text gives.
	var words []string
	for i := range 120000 {
		words = append(words, fmt.Sprintf("filler%d", i))
	}
	words[60000] = "needle"
	text := strings.Join(words, " ")
	if got, want := m.MakeWindow(Prefix(text[:MaxText+100]), "[", "]"), m.Make(text, "[", "]"); got != want || !strings.Contains(got, "[needle]") {
		t.Fatalf("snippet of the start %q, of the whole text %q", got, want)
	}
}

// A long text's snippet is cut from around its first match, reading no
// more of it than MaxText: making it takes memory for the snippet only.
func TestMakeLongText(t *testing.T) {
	var b strings.Builder
	b.WriteString("(start) ")
	for i := 0; b.Len() < 20<<20; i++ {
		fmt.Fprintf(&b, "filler%d ", i%1000)
		if i == 40000 {
			b.WriteString("the Needle is here, ")
		}
	}
	b.WriteString("haystack")
	text := b.String()
	m := NewMatcher("needles")
	var got string
	allocated := allocatedBy(func() { got = m.Make(text, "[", "]") })
	if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || !strings.Contains(got, "the [Needle] is here") || len(strings.Fields(got)) > Words+2 {
		t.Fatalf("snippet = %q", got)
	}
	if allocated > 256<<10 {
		t.Fatalf("making a snippet of %d MB allocated %d KB", len(text)>>20, allocated>>10)
	}
	// A match beyond the first Scan bytes is not looked for: the snippet
	// is the text's start.
	got = NewMatcher("haystack").Make(text, "[", "]")
	if !strings.HasPrefix(got, "(start) filler0 filler1") || !strings.HasSuffix(got, "…") || strings.Contains(got, "[") {
		t.Fatalf("snippet without a match = %q", got)
	}
}

func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// BenchmarkMakeLongText makes snippets of 20 MB texts: matched at 1 MB,
// not matched, and full of words that start like the query's word.
func BenchmarkMakeLongText(b *testing.B) {
	text := strings.Repeat("filler words of a long tool output ", 20<<20/35)
	var lookalikes strings.Builder
	for i := 0; lookalikes.Len() < 20<<20; i++ {
		fmt.Fprintf(&lookalikes, "configx%d ", i)
	}
	for _, tc := range []struct{ name, query, text string }{
		{"match at 1 MB", "needle", text[:Scan-100] + " needle " + text[Scan-100:]},
		{"no match", "absent", text},
		{"lookalike words", "configuration", lookalikes.String()},
	} {
		m := NewMatcher(tc.query)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.Make(tc.text, "[", "]")
			}
		})
	}
}

// FuzzMake makes snippets of any text for any query, including long and
// repetitive ones (the text repeated up to times, at most MaxText bytes
// past Span): a snippet is short, and the start of a long text gives the
// snippet the whole text gives.
func FuzzMake(f *testing.F) {
	f.Add("pool", "the pool", uint16(1))
	f.Add(`"a b"`, "a\nb\x00c", uint16(3))
	f.Add("needle", "hay needle ", uint16(2000))
	f.Add(strings.Repeat("a ", 600), "a a b ", uint16(60000))
	f.Fuzz(func(t *testing.T, q, text string, times uint16) {
		if len(text) > 0 {
			text = strings.Repeat(text, min(int(times), (MaxText+Span)/len(text)+1))
		}
		m := NewMatcher(q)
		got := m.Make(text, "<", ">")
		m.MakeWindow(Window{Text: text, Head: true, Tail: true}, "<", ">")
		if n := len(got); n > 2*Span {
			t.Fatalf("snippet of %d bytes", n)
		}
		if len(text) > MaxText {
			if w := m.MakeWindow(Prefix(text[:MaxText+1]), "<", ">"); w != got {
				t.Fatalf("snippet of the start %q, of the whole text %q", w, got)
			}
		}
	})
}
