package session_test

import (
	"encoding/json"
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

// The short id an agent shows of its session (Gemini CLI's first eight
// characters, in its file names and lists) restores it as its whole id
// does; three characters are too few, and say so.
func TestRestoreToAgentShortID(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	src := fx.SourceSession(t, "gemini", clitest.Samples+"/gemini/vibecodingtracker-gemini.jsonl")
	id := strings.TrimPrefix(src.Key, "gemini:")
	if len(id) < 8 {
		t.Fatalf("gemini key %q", src.Key)
	}
	r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "restore-to", "gemini", strings.ToUpper(id[:8]), "--dir", t.TempDir(), "--json")
	var rep struct {
		SessionID string `json:"session_id"`
	}
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &rep) != nil || rep.SessionID != id {
		t.Fatalf("restore-to gemini %s: exit %d, %s%s; want session %s", id[:8], r.Code, r.Stdout, r.Stderr, id)
	}
	r = fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "restore-to", "gemini", id[:3])
	if r.Code != 3 || !strings.Contains(r.Stderr, "no session matches") {
		t.Errorf("restore-to gemini %s: exit %d, %q", id[:3], r.Code, r.Stderr)
	}
}
