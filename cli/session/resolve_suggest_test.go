package session_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// A word of a title is not a reference, but loom says which sessions it
// likely meant: those whose title holds it first, with ids to give back.
func TestResolveSuggestsTitles(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	budget := clitest.Say(t, fx, "retry budget", 1)
	clitest.Say(t, fx, "unrelated work", 1)
	r := fx.Exec(t, "", "session", "show", "retry")
	if r.Code != 3 || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 ||
		!strings.Contains(r.Stderr, `no session matches "retry"; sessions that mention it: "retry budget" (`+budget.ID+`)`) ||
		strings.Contains(r.Stderr, "unrelated") {
		t.Fatalf("loom session show retry: exit %d, %q", r.Code, r.Stderr)
	}
	if r := fx.Exec(t, "", "session", "show", "nothing-like-it"); r.Code != 3 || strings.Contains(r.Stderr, "mention") {
		t.Fatalf("a word no session holds: exit %d, %q", r.Code, r.Stderr)
	}
}
