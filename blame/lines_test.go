package blame

import (
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// ParseLines reads a line or a range, every line when empty, and
// refuses anything else.
func TestParseLines(t *testing.T) {
	for s, want := range map[string]LineRange{"": {}, "42": {42, 42}, "40-60": {40, 60}, " 40 - 60 ": {40, 60}, "7-7": {7, 7}} {
		if got, ok := ParseLines(s); !ok || got != want {
			t.Errorf("ParseLines(%q) = %v, %v; want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"x", "0", "-3", "9-2", "4-", "1-2-3", "1.5"} {
		if got, ok := ParseLines(s); ok {
			t.Errorf("ParseLines(%q) = %v, want refused", s, got)
		}
	}
}

// Keep keeps the lines asked for, those past the file's end dropped,
// and refuses a range that starts past it.
func TestResultKeep(t *testing.T) {
	res := func() *Result {
		r := &Result{Path: "a.go"}
		for n := 1; n <= 5; n++ {
			r.Lines = append(r.Lines, Line{N: n})
		}
		return r
	}
	for _, c := range []struct {
		lr   LineRange
		want []int
	}{{LineRange{}, []int{1, 2, 3, 4, 5}}, {LineRange{2, 3}, []int{2, 3}}, {LineRange{4, 9}, []int{4, 5}}, {LineRange{5, 5}, []int{5}}} {
		r := res()
		if err := r.Keep(c.lr); err != nil {
			t.Fatalf("Keep(%v): %v", c.lr, err)
		}
		var got []int
		for _, l := range r.Lines {
			got = append(got, l.N)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Keep(%v) kept %v, want %v", c.lr, got, c.want)
		}
	}
	err := res().Keep(LineRange{6, 8})
	if loom.ErrorCode(err) != loom.EINVALID || !strings.Contains(err.Error(), "a.go has 5 lines: there is no line 6") {
		t.Errorf("Keep past the end: %v", err)
	}
}
