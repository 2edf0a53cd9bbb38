package term

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// WrapColumns wraps each line of text wider than width at spaces, never
// inside a word, and goes on at the line's hanging column: where its
// description starts in a two-column list (a command and what it does, a
// flag and its meaning, an example and its comment: the column after the
// first run of two spaces or more), else at the line's own indentation.
// A word wider than the room left stays whole. Lines that fit are left
// as they are, so a help text written to be read at 80 columns keeps its
// shape on a wider terminal.
func WrapColumns(text string, width int) string {
	if width <= 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) <= width {
			continue
		}
		hang := hangingColumn(l)
		if hang > width/2 {
			hang = leadingSpaces(l) + 4
		}
		if hang >= width-10 {
			hang = 0
		}
		first := wordwrap(l[hang:], width-hang)
		body := strings.Split(first, "\n")
		// The first line keeps what stood before the hanging column.
		var b strings.Builder
		b.WriteString(l[:hang])
		pad := strings.Repeat(" ", hang)
		for j, part := range body {
			if j > 0 {
				b.WriteString("\n" + pad)
			}
			b.WriteString(strings.TrimLeft(part, " "))
		}
		lines[i] = strings.TrimRight(b.String(), " ")
	}
	return strings.Join(lines, "\n")
}

// hangingColumn is the column a wrapped line of l goes on at: after the
// first run of two spaces or more that follows a word, else l's
// indentation.
func hangingColumn(l string) int {
	lead := leadingSpaces(l)
	rest := l[lead:]
	if i := strings.Index(rest, "  "); i > 0 {
		j := i
		for j < len(rest) && rest[j] == ' ' {
			j++
		}
		if j < len(rest) {
			return lead + j
		}
	}
	return lead
}

func leadingSpaces(l string) int {
	return len(l) - len(strings.TrimLeft(l, " "))
}

// ReflowProse joins the lines of each paragraph of prose in text (lines
// apart from blank ones, none indented, none a list item or a table row)
// and wraps the paragraph again at width, so that a help text edited
// after it was wrapped by hand reads as one paragraph, with no short
// line left where a wrap met the old line break. Every other paragraph
// (examples, lists, tables, anything indented) is left as it is, as is
// text when width is 0 or less.
func ReflowProse(text string, width int) string {
	if width <= 0 {
		return text
	}
	paras := strings.Split(text, "\n\n")
	for i, p := range paras {
		lines := strings.Split(p, "\n")
		if len(lines) < 2 || !prose(lines) {
			continue
		}
		paras[i] = wordwrap(strings.Join(lines, " "), width)
	}
	return strings.Join(paras, "\n\n")
}

// prose reports whether lines are a paragraph of running text: a line
// that ends with a colon before the last introduces the lines after it
// (an example, a header to send), which keep their own lines.
func prose(lines []string) bool {
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || t != l || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") ||
			strings.HasPrefix(t, "|") || strings.HasPrefix(t, "$ ") || numbered(t) ||
			i < len(lines)-1 && strings.HasSuffix(t, ":") {
			return false
		}
	}
	return true
}

// numbered reports whether t starts as an item of a numbered list
// ("1. ", "2) ").
func numbered(t string) bool {
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' '
}
