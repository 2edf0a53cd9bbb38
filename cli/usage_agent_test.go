package cli

import (
	"strings"
	"testing"
)

// loom usage --agent with a name no session has and loom does not know
// (a typo) is a usage error listing the names it knows, not a report of
// nothing; a known agent without sessions reports nothing.
func TestUsageUnknownAgent(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	for _, args := range [][]string{{"usage", "daily", "--agent", "claud"}, {"usage", "--agent", "claud"}, {"usage", "blocks", "--agent", "claud", "--json"}} {
		r := fx.exec(t, "", args...)
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 ||
			!strings.Contains(r.stderr, `--agent "claud"`) || !strings.Contains(r.stderr, "claude-code, cli") {
			t.Errorf("%s: exit %d, %q", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if r := fx.exec(t, "", "usage", "daily", "--agent", "gemini", "--json"); r.code != 0 {
		t.Errorf("a known agent without sessions: exit %d, %s", r.code, r.stderr)
	}
	if r := fx.exec(t, "", "usage", "daily", "--agent", "cli"); r.code != 0 {
		t.Errorf("an agent with sessions: exit %d, %s", r.code, r.stderr)
	}
}
