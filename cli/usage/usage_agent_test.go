package usage_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// loom usage --agent with a name no session has and loom does not know
// (a typo) is a usage error listing the names it knows, not a report of
// nothing; a known agent without sessions reports nothing.
func TestUsageUnknownAgent(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	for _, args := range [][]string{{"usage", "daily", "--agent", "claud"}, {"usage", "--agent", "claud"}, {"usage", "blocks", "--agent", "claud", "--json"}} {
		r := fx.Exec(t, "", args...)
		if r.Code != 2 || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 ||
			!strings.Contains(r.Stderr, `--agent "claud"`) || !strings.Contains(r.Stderr, " claude-code,") || !strings.Contains(r.Stderr, " cli,") ||
			strings.Contains(r.Stderr, "of , ") {
			t.Errorf("%s: exit %d, %q", strings.Join(args, " "), r.Code, r.Stderr)
		}
	}
	if r := fx.Exec(t, "", "usage", "daily", "--agent", "gemini", "--json"); r.Code != 0 {
		t.Errorf("a known agent without sessions: exit %d, %s", r.Code, r.Stderr)
	}
	if r := fx.Exec(t, "", "usage", "daily", "--agent", "cli"); r.Code != 0 {
		t.Errorf("an agent with sessions: exit %d, %s", r.Code, r.Stderr)
	}
}
