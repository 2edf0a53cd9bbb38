package snippet

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// readable takes any text: it never fails, keeps valid UTF-8 valid,
// keeps the count of lines, and grows a text by a bounded factor.
func FuzzReadable(f *testing.F) {
	for _, s := range []string{
		`{"command":"go test ./... 2\u003e\u00261","description":"Run the tests"}`,
		`mand":"cat \"a\\nb\"","file_path":"/x/y.go"}`,
		`["a","b",{"c":[1,true,null]}]`,
		`{"a":"\ud83d\ude00 \u00e9"}`,
		"plain text\n{\"k\":\"v\"}\nmore",
		`{"awk":"awk '{print $1}'"}`,
		`{"":"0000000\n"}`,
		`{"0":"\ud80a\u000A0000000`,
	} {
		f.Add(s, false, false)
		f.Add(s, true, true)
	}
	f.Fuzz(func(t *testing.T, text string, head, tail bool) {
		got := readable(text, head, tail)
		if utf8.ValidString(text) && !utf8.ValidString(got) {
			t.Fatalf("readable(%q) = %q: not UTF-8", text, got)
		}
		if strings.Count(got, "\n") != strings.Count(text, "\n") {
			t.Fatalf("readable(%q) = %q: lines changed", text, got)
		}
		if len(got) > 4*len(text)+16 {
			t.Fatalf("readable(%q) grew to %d bytes", text, len(got))
		}
	})
}
