package term

import "testing"

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
