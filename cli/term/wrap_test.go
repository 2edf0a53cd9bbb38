package term

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// Text wraps at spaces only: a hyphenated word (a model name, an id, a
// flag) stays whole.
func TestWordwrapKeepsHyphenatedWords(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"resuming (openai:gpt-4o-mini, 2 messages)", 24, "resuming\n(openai:gpt-4o-mini, 2\nmessages)"},
		{"see loom session list --all-projects now", 30, "see loom session list\n--all-projects now"},
		{"no hyphen here at all", 10, "no hyphen\nhere at\nall"},
	} {
		if got := wordwrap(tc.in, tc.width); got != tc.want {
			t.Errorf("wordwrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// A help text's long lines wrap at their description's column, words
// whole, and every line fits.
func TestWrapColumns(t *testing.T) {
	in := strings.Join([]string{
		"loom keeps every conversation an agent has as a session.",
		"  session     List, show, resume, fork, rewind, rename, archive, delete, export and import sessions",
		"      --db string          store to use: a SQLite file, sqlite:PATH or postgres://… (default $LOOM_DB, else the data directory's sessions.db)",
		"Anthropic bills at twice the input price); a model's snapshot names (-20250514, -latest) take its price",
		"      --from string    import another agent's sessions: aider, amp, antigravity, chatgpt, claude-ai, claude-code, cline",
	}, "\n")
	got := WrapColumns(in, 80)
	want := strings.Join([]string{
		"loom keeps every conversation an agent has as a session.",
		"  session     List, show, resume, fork, rewind, rename, archive, delete, export",
		"              and import sessions",
		"      --db string          store to use: a SQLite file, sqlite:PATH or",
		"                           postgres://… (default $LOOM_DB, else the data",
		"                           directory's sessions.db)",
		"Anthropic bills at twice the input price); a model's snapshot names (-20250514,",
		"-latest) take its price",
		"      --from string    import another agent's sessions: aider, amp, antigravity,",
		"                       chatgpt, claude-ai, claude-code, cline",
	}, "\n")
	if got != want {
		t.Errorf("wrapped:\n%s\nwant:\n%s", got, want)
	}
	for l := range strings.SplitSeq(got, "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Errorf("%d columns: %q", ansi.StringWidth(l), l)
		}
	}
	if WrapColumns(in, 0) != in {
		t.Error("width 0 changed the text")
	}
}

// A help's usage and examples are commands: one too wide goes on four
// columns in, an example's lines joined by " \", its comment on a line
// of its own above it; no line starts what reads as another command,
// and no word is lost or joined to the next ("loomsession").
func TestWrapColumnsKeepsCommandsWhole(t *testing.T) {
	in := strings.Join([]string{
		"Usage:",
		"  loom token create [--user NAME] [--name LABEL] [--token-ttl DURATION] [--scope full|share] [flags]",
		"",
		"Examples:",
		"  loom session handoff 0196a3b2 --to opencode     # then: opencode --session ses_…",
		"  loom share 0196a3b2 --hub https://hub.example.com --token \"$SHARE_TOKEN\" --yes --json",
		"",
		"Flags:",
		"  -h, --help   help for handoff",
	}, "\n")
	got := WrapColumns(in, 60)
	want := strings.Join([]string{
		"Usage:",
		"  loom token create [--user NAME] [--name LABEL]",
		"      [--token-ttl DURATION] [--scope full|share] [flags]",
		"",
		"Examples:",
		"  # then: opencode --session ses_…",
		"  loom session handoff 0196a3b2 --to opencode",
		"  loom share 0196a3b2 --hub https://hub.example.com \\",
		"      --token \"$SHARE_TOKEN\" --yes --json",
		"",
		"Flags:",
		"  -h, --help   help for handoff",
	}, "\n")
	if got != want {
		t.Errorf("wrapped:\n%s\nwant:\n%s", got, want)
	}
}
