package cli

import (
	"strings"
	"testing"
)

// A word of a title is not a reference, but loom says which sessions it
// likely meant: those whose title holds it first, with ids to give back.
func TestResolveSuggestsTitles(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	budget := say(t, fx, "retry budget", 1)
	say(t, fx, "unrelated work", 1)
	r := fx.exec(t, "", "session", "show", "retry")
	if r.code != 3 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 ||
		!strings.Contains(r.stderr, `no session matches "retry"; sessions that mention it: "retry budget" (`+budget.ID+`)`) ||
		strings.Contains(r.stderr, "unrelated") {
		t.Fatalf("loom session show retry: exit %d, %q", r.code, r.stderr)
	}
	if r := fx.exec(t, "", "session", "show", "nothing-like-it"); r.code != 3 || strings.Contains(r.stderr, "mention") {
		t.Fatalf("a word no session holds: exit %d, %q", r.code, r.stderr)
	}
}
