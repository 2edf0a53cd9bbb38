package session_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// TestRestoreToBadInput: an unknown agent, a session
// of another agent (or loom's own), an unknown id: one line each, with
// the exit code of the conventions, and nothing written.
func TestRestoreToBadInput(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	src := fx.SourceSession(t, "claude-code", clitest.Samples+"/claude-code/spotter/short.jsonl")
	id := strings.TrimPrefix(src.Key, "claude-code:")
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"nope", id}, 2, `unknown agent "nope": want claude-code, cline, codex`},
		{[]string{"opencode", src.ID}, 2, "is not a session of opencode (it is imported from claude-code)"},
		{[]string{"codex", src.ID}, 2, "is not a session of codex (it is imported from claude-code)"},
		{[]string{"claude-code", fx.Main.ID}, 2, "is not a session of claude-code (it is loom's own)"},
		{[]string{"claude-code", "0123abcd-no-such"}, 3, "no session matches"},
		{[]string{"claude-code"}, 2, ""},
	} {
		r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, append([]string{"session", "restore-to"}, c.args...)...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.says) || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("restore-to %v: exit %d, %q; want exit %d saying %q", c.args, r.Code, r.Stderr, c.code, c.says)
		}
	}
}
