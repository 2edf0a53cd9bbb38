package secrets

import (
	"fmt"
	"strings"
	"testing"
)

// A gate keeps a bounded number of literals from one read to the next,
// the newest; within one read every value found is replaced in all of
// it, however many there are.
func TestGateEchoesAreBounded(t *testing.T) {
	g := Default().Gate(nil)
	n := 3 * GateEchoes
	tokens := make([]string, n)
	var b strings.Builder
	b.WriteString("first I used " + fmt.Sprintf("Q%05dmZ4pXkR2vT8wN5bJ3hLy", 0) + "\n")
	for i := range tokens {
		tokens[i] = fmt.Sprintf("Q%05dmZ4pXkR2vT8wN5bJ3hLy", i)
		fmt.Fprintf(&b, "Authorization: Bearer %s\n", tokens[i])
	}
	got := g.Text(b.String())
	if strings.Contains(got, "Q0") || strings.Count(got, "[REDACTED:authorization-header]") != n+1 {
		t.Fatalf("one read of %d values is not redacted whole:\n%.400s", n, got)
	}
	if l := g.echoes.Len(); l > GateEchoes || l < GateEchoes-blockSize {
		t.Errorf("the gate keeps %d literals past the read, want at most %d", l, GateEchoes)
	}
	if got := g.Text("then " + tokens[n-1]); strings.Contains(got, tokens[n-1]) {
		t.Errorf("the newest value is not replaced in a later read: %q", got)
	}
}
