package cli

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// A search no message holds every word of comes back with the messages
// the tiers after it find, says so in one line and marks them; --exact
// keeps to every word.
func TestSearchFallsBackToAnyWord(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	say(t, fx, "session registry", 1)
	r := fx.exec(t, "", "search", "-a", "wombat remember which chats", "--json")
	if r.code != 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 || !strings.Contains(r.stderr, `No message holds every word of "wombat remember which chats"`) {
		t.Fatalf("search: exit %d, %q", r.code, r.stderr)
	}
	hits := decodeJSON[[]loom.SearchHit](t, r.stdout)
	if len(hits) == 0 {
		t.Fatal("no hits")
	}
	for _, h := range hits {
		if h.Tier == "" {
			t.Fatalf("hit %+v", h)
		}
	}
	if r := fx.exec(t, "", "search", "-a", "wombat remember which chats", "--exact", "--json"); r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("--exact: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	if r := fx.exec(t, "", "search", "-a", "wombat session", "--json"); r.code != 0 || r.stderr != "" || decodeJSON[[]loom.SearchHit](t, r.stdout)[0].Tier != "" {
		t.Fatalf("every word held: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
}
