package search_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// A search no message holds every word of comes back with the messages
// the tiers after it find, says so in one line and marks them; --exact
// keeps to every word.
func TestSearchFallsBackToAnyWord(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	clitest.Say(t, fx, "session registry", 1)
	r := fx.Exec(t, "", "search", "-a", "wombat remember which chats", "--json")
	if r.Code != 0 || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 || !strings.Contains(r.Stderr, `No message holds every word of "wombat remember which chats"`) {
		t.Fatalf("search: exit %d, %q", r.Code, r.Stderr)
	}
	hits := clitest.DecodeJSON[[]loom.SearchHit](t, r.Stdout)
	if len(hits) == 0 {
		t.Fatal("no hits")
	}
	for _, h := range hits {
		if h.Tier == "" {
			t.Fatalf("hit %+v", h)
		}
	}
	if r := fx.Exec(t, "", "search", "-a", "wombat remember which chats", "--exact", "--json"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "[]" {
		t.Fatalf("--exact: exit %d, %s %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := fx.Exec(t, "", "search", "-a", "wombat session", "--json"); r.Code != 0 || r.Stderr != "" || clitest.DecodeJSON[[]loom.SearchHit](t, r.Stdout)[0].Tier != "" {
		t.Fatalf("every word held: exit %d, %s %s", r.Code, r.Stdout, r.Stderr)
	}
}
