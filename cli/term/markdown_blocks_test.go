package term

import (
	"fmt"
	"strings"
	"testing"
)

// streamBlocks feeds src to CompleteBlocks a word at a time, as a model
// streams it, and returns the finished pieces in the order they were
// cut off, the last one being what is left when the stream ends.
func streamBlocks(t *testing.T, src string) []string {
	t.Helper()
	var pieces []string
	pending := ""
	for src != "" {
		i := strings.IndexAny(src, " \n")
		if i < 0 {
			i = len(src) - 1
		}
		pending, src = pending+src[:i+1], src[i+1:]
		if n := CompleteBlocks(pending); n > 0 {
			pieces = append(pieces, pending[:n])
			pending = pending[n:]
		}
	}
	return append(pieces, pending)
}

// renderPieces renders each piece on its own and joins them as the
// chat prints them: one empty line between two blocks.
func renderPieces(pieces []string, width int) string {
	var out []string
	for _, p := range pieces {
		if strings.TrimSpace(p) == "" {
			continue
		}
		out = append(out, RenderMarkdown(p, width))
	}
	return strings.Join(out, "\n")
}

// A reply rendered block by block as it streams reads as the whole reply
// rendered at once: headings, paragraphs, lists (tight, loose, ordered
// from any number), code fences holding blank lines and Markdown,
// tables, quotes and rules.
func TestCompleteBlocksRenderLikeTheWhole(t *testing.T) {
	var long strings.Builder
	long.WriteString("## Tall plan\n\nHere is the **plan**, in *three* parts:\n\n")
	for i := range 12 {
		fmt.Fprintf(&long, "- step %02d with `code` and **bold**\n", i)
	}
	long.WriteString("\n```go\nfunc main() {\n\n\t// **not bold**\n\tfmt.Println(\"- not a list\")\n}\n```\n\n| step | time |\n|------|-----:|\n| one | 1s |\n| two | 20s |\n\nDone.")
	cases := map[string]string{
		"tall":       long.String(),
		"loose list": "Steps:\n\n1. first\n\n2. second\n   continued\n\n3. third\n\nAfter.\n",
		"ordered":    "3. three\n4. four\n\ntext\n",
		"quote":      "> a quote\n> more\n\n> another\n\n---\n\n# End\nbody right under\n",
		"nested":     "- outer\n  - inner **b**\n\n  para in item\n- next\n\n```\nunclosed fence\n\nkeeps going",
		"setext":     "Title\n=====\n\nSub\n---\ntext\n",
		"table last": "Intro:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
		"fence only": "```sh\nls -l\n```\n",
		"no newline": "just one line",
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			pieces := streamBlocks(t, src)
			if strings.Join(pieces, "") != src {
				t.Fatalf("the pieces do not make up the text:\n%q", pieces)
			}
			for _, width := range []int{80, 40} {
				if got, want := renderPieces(pieces, width), RenderMarkdown(src, width); got != want {
					t.Fatalf("block by block at %d columns:\n%s\nwhole:\n%s\npieces: %q", width, got, want, pieces)
				}
			}
		})
	}
	if n := len(streamBlocks(t, long.String())); n < 5 {
		t.Fatalf("the tall reply was cut into %d pieces; its blocks were not printed as they ended", n)
	}
}

// A block is cut off as soon as it is finished, not only when the next
// one starts: a closed fence, a heading, a paragraph followed by an empty
// line. An open fence, a list and a paragraph still going are kept.
func TestCompleteBlocksWhenFinished(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{"para\n\n", 6},
		{"para\n", 0},
		{"para\nmore", 0},
		{"# Heading\n", 10},
		{"```\ncode\n```\n", 13},
		{"```\ncode\n\n", 0},
		{"- a\n- b\n\n", 0},
		{"- a\n- b\n\nafter\n", 9},
		{"| a |\n|---|\n| 1 |\n", 0},
		{"| a |\n|---|\n| 1 |\n\n", 19},
		{"one\n\ntwo\n", 5},
	} {
		if got := CompleteBlocks(c.src); got != c.want {
			t.Errorf("CompleteBlocks(%q) = %d, want %d", c.src, got, c.want)
		}
	}
}
