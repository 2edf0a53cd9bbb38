package command

import (
	"strings"

	"github.com/loomhq/loom/cli/term"
)

// ThinkingBlock is reasoning as --show-thinking shows it, live and in
// the history: each line behind a gray gutter, the text rendered as
// Markdown where replies are (colour on a terminal), escaped plain text
// elsewhere.
func ThinkingBlock(cs *term.ColorScheme, text string, width int) string {
	body := term.Sanitize(strings.TrimRight(text, "\n"))
	if cs.Enabled() {
		body = strings.TrimRight(term.RenderMarkdown(text, width-2), "\n")
	}
	var b strings.Builder
	for _, l := range strings.Split(body, "\n") {
		b.WriteString(cs.Gray("│ ") + l + "\n")
	}
	return b.String()
}
