package secrets

import (
	"strings"
	"testing"
)

// A character reference cut short or empty (&#; &#x; &; &#) decodes to
// nothing and never stops the scan: the text around it is read as is.
// Every prefix of each case is tried, so a reference cut at any byte is.
func TestEntityCutShort(t *testing.T) {
	for _, c := range []string{"&#;", "&#x;", "&#X;", "&;", "&#", "&#0;", "&#xffffffff;", "&#99999999;", "&quot;", "&#39;", "&#x27;", "a &#; b &quot;pw&quot;"} {
		for i := 0; i <= len(c); i++ {
			s := c[:i]
			got, at, ok := unentity(s)
			if ok && len(at) != len(got)+1 {
				t.Errorf("unentity(%q) = %q with %d offsets, want %d", s, got, len(at), len(got)+1)
			}
		}
	}
	if got, _, _ := unentity("a &#; b &quot;pw&quot;"); got != `a &#; b "pw"` {
		t.Errorf("unentity: got %q", got)
	}
}

// Whatever the text, decoding its references does not panic and gives an
// offset in the text for every decoded byte and for its end.
func FuzzUnentity(f *testing.F) {
	for _, s := range []string{"&#;", "&#x27;", "&quot;p&quot;", "&&&;", strings.Repeat("&#", 20)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, at, ok := unentity(s)
		if !ok {
			return
		}
		if len(at) != len(got)+1 {
			t.Fatalf("unentity(%q) = %q with %d offsets, want %d", s, got, len(at), len(got)+1)
		}
		for _, o := range at {
			if o < 0 || int(o) > len(s) {
				t.Fatalf("unentity(%q): offset %d outside the text", s, o)
			}
		}
	})
}
