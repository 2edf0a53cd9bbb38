package chat

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/termtest"
)

// Whatever the shape and height of a reply, streamed a word at a time
// into the live area, what a terminal holds afterwards (scrollback and
// screen) is the reply rendered, once, as rendering it whole gives:
// nothing provisional is left behind by a redraw, even of lines that
// wrap or hold tabs, and a line aside (a note) goes in between.
func TestLiveBlocksLeaveTheReplyOnce(t *testing.T) {
	var list, fence, para strings.Builder
	list.WriteString("Steps:\n\n")
	for i := range 60 {
		fmt.Fprintf(&list, "- step %02d **bold** and `code`\n", i)
	}
	list.WriteString("\nDone.")
	fence.WriteString("```go\n")
	for i := range 50 {
		fmt.Fprintf(&fence, "\tif err := check%02d(ctx, %s); err != nil {\n", i, strings.Repeat("a", i%40))
	}
	fence.WriteString("```\n\nAfter the code.")
	for i := range 12 {
		fmt.Fprintf(&para, "A long line %d of one paragraph, written without an empty line, so that it wraps on a narrow screen.\n", i)
	}
	docs := map[string]string{"list": list.String(), "fence": fence.String(), "paragraph": para.String(),
		"table": "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n# Heading\n\n> quote\n> more\n"}
	for name, doc := range docs {
		for _, sz := range []struct{ cols, rows int }{{80, 24}, {100, 40}, {40, 10}} {
			t.Run(fmt.Sprintf("%s/%dx%d", name, sz.cols, sz.rows), func(t *testing.T) {
				var out strings.Builder
				l := newLiveBlocks(&out, sz.cols, sz.rows, term.RenderMarkdown, "\n")
				words := strings.SplitAfter(doc, " ")
				for i, w := range words {
					l.write(w)
					if i == len(words)/2 {
						l.hide()
						out.WriteString("a note aside\n")
						l.resume()
					}
				}
				l.finish()
				history := termtest.Replay(strings.ReplaceAll(out.String(), "\n", "\r\n"), sz.cols, sz.rows)
				history = strings.Replace(history, "a note aside\n", "", 1)
				if want := termtest.Shown(term.RenderMarkdown(doc, sz.cols), sz.cols); history != want {
					t.Fatalf("the terminal holds:\n%s\n--- want the reply rendered once:\n%s", history, want)
				}
			})
		}
	}
}
