package term

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// WrapColumns wraps each line of text wider than width at spaces, never
// inside a word, and goes on at the line's hanging column: where its
// description starts in a two-column list (a command and what it does, a
// flag and its meaning: the column after the first run of two spaces or
// more), else at the line's own indentation. A word wider than the room
// left stays whole. Lines that fit are left as they are, so a help text
// written to be read at 80 columns keeps its shape on a wider terminal.
//
// The lines of a help's "Usage:" and "Examples:" sections are commands:
// one too wide goes on four columns further in, so that no part of it
// reads as a command of its own; an example ends each of its lines but
// the last with " \" (a shell reads it as one command), and a comment
// after it ("  # then: …") goes on a line of its own above it.
func WrapColumns(text string, width int) string {
	if width <= 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	section := ""
	for i, l := range lines {
		if l != "" && l[0] != ' ' {
			section = l
		}
		if ansi.StringWidth(l) <= width {
			continue
		}
		switch section {
		case "Usage:":
			lines[i] = wrapCommand(l, width, "")
		case "Examples:":
			lines[i] = wrapExample(l, width)
		default:
			lines[i] = wrapHanging(l, width)
		}
	}
	return strings.Join(lines, "\n")
}

// wrapHanging wraps l at its hanging column.
func wrapHanging(l string, width int) string {
	hang := hangingColumn(l)
	if hang > width/2 {
		// The description starts too far right to go on under it.
		return wrapAt(l, leadingSpaces(l), leadingSpaces(l)+4, width, "")
	}
	return wrapAt(l, hang, hang, width, "")
}

// wrapCommand wraps the command l, going on four columns in, each line
// but the last ended by end.
func wrapCommand(l string, width int, end string) string {
	lead := leadingSpaces(l)
	return wrapAt(l, lead, lead+4, width, end)
}

// wrapExample wraps the example l: its comment on a line of its own
// above it, the command's lines joined by a shell's " \".
func wrapExample(l string, width int) string {
	lead := leadingSpaces(l)
	cmd, comment := l, ""
	if i := strings.Index(l[lead:], "  #"); i > 0 {
		cmd = strings.TrimRight(l[:lead+i], " ")
		comment = strings.Repeat(" ", lead) + strings.TrimLeft(l[lead+i:], " ")
	}
	if comment == "" {
		return wrapCommand(cmd, width, " \\")
	}
	if ansi.StringWidth(comment) > width {
		comment = wrapAt(comment, lead, lead, width, "")
		comment = strings.ReplaceAll(comment, "\n"+strings.Repeat(" ", lead), "\n"+strings.Repeat(" ", lead)+"# ")
	}
	if ansi.StringWidth(cmd) > width {
		cmd = wrapCommand(cmd, width, " \\")
	}
	return comment + "\n" + cmd
}

// wrapAt wraps l after its first from columns, which stay as they are,
// and goes on at column indent; each line but the last ends with end. If
// indent leaves too little room, it goes on at the line's start.
func wrapAt(l string, from, indent, width int, end string) string {
	if indent >= width-10 {
		from, indent = 0, 0
	}
	room := width - max(from, indent) - len(end)
	body := strings.Split(wordwrap(strings.TrimLeft(l[from:], " "), room), "\n")
	var b strings.Builder
	b.WriteString(l[:from])
	pad := strings.Repeat(" ", indent)
	for j, part := range body {
		if j > 0 {
			b.WriteString(end + "\n" + pad)
		}
		b.WriteString(strings.TrimSpace(part))
	}
	return strings.TrimRight(b.String(), " ")
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
