package session_test

import (
	"os"
	"strings"
	"testing"

	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/secrets"
)

// TestHandoffCountsCarriedSecrets: a Claude Code session whose only
// secret is in a thinking block (the file Claude Code 2.1.330 wrote in
// TestImportRealClaudeCode) handed to a target that does not take the
// reasoning (Claude Code, Codex) says nothing was redacted, as its file
// holds no marker; handed to one that does (Gemini CLI), it says one
// secret was, the one marker its file holds.
func TestHandoffCountsCarriedSecrets(t *testing.T) {
	t.Parallel()
	clitest.SkipWhenRedactingOnWrite(t, "the hand-off counts the secrets it redacts, and the store already holds the marker")
	fx := clitest.NewFixture(t)
	s := fx.SourceSession(t, claudecode.Tool, "../../importer/claudecode/testdata/c1a0e5c0-0000-4000-8000-000000000005.jsonl")
	for _, c := range []struct {
		to   string
		want int
	}{{"claude-code", 0}, {"codex", 0}, {"gemini", 1}} {
		r := fx.RunWith(t, clitest.RunOpts{Before: clitest.AllFormats}, "session", "handoff", s.ID, "--to", c.to, "--dir", fx.Project, "--json")
		if r.Code != 0 {
			t.Fatalf("handoff --to %s: exit %d: %s", c.to, r.Code, r.Stderr)
		}
		rep := clitest.DecodeJSON[clitest.HandoffJSON](t, r.Stdout)
		data, err := os.ReadFile(rep.Path)
		if err != nil {
			t.Fatal(err)
		}
		markers := strings.Count(string(data), secrets.MarkerPrefix)
		said := strings.Contains(r.Stderr, "redacted")
		if rep.Redacted != c.want || markers != c.want || said != (c.want > 0) || strings.Contains(string(data), "ghp_") {
			t.Errorf("--to %s: reported %d redacted (stderr %q), the file holds %d markers; want %d", c.to, rep.Redacted, r.Stderr, markers, c.want)
		}
	}
}
