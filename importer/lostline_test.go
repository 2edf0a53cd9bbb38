package importer

import "testing"

// LostLine finds the last line before n that could not be read, of the
// file asked about, as problems are added and after they are cut back;
// a line of bytes that are not UTF-8 was read, and is none.
func TestLostLine(t *testing.T) {
	r := &Result{}
	r.Problemf("a", 3, "not JSON")
	r.Problemf("b", 4, "not JSON")
	r.Problemf("a", 5, NotUTF8)
	for _, c := range []struct{ n, want int }{{1, 0}, {3, 0}, {4, 3}, {6, 3}} {
		if got := r.LostLine("a", c.n); got != c.want {
			t.Errorf("LostLine(a, %d) = %d, want %d", c.n, got, c.want)
		}
	}
	r.Problemf("a", 7, "line longer than the limit")
	if got := r.LostLine("a", 9); got != 7 {
		t.Errorf("after a line more: %d, want 7", got)
	}
	if !r.LostBefore("b", 5) || r.LostBefore("b", 4) {
		t.Errorf("LostBefore(b) does not say line 4")
	}
	r.Problems = r.Problems[:1]
	if got := r.LostLine("a", 9); got != 3 {
		t.Errorf("after the problems are cut back: %d, want 3", got)
	}
}
