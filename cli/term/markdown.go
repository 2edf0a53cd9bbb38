package term

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// RenderMarkdown renders Markdown for a terminal: headings and strong text
// bold, emphasis italic, code cyan, lists with bullets, quotes with a bar,
// tables aligned in columns, and paragraphs wrapped to width. It is small
// on purpose: a full renderer with syntax highlighting costs every loom
// process (even `session list`) tens of milliseconds to start. src is
// stored text: its control characters are escaped (Sanitize) before it
// is styled.
func RenderMarkdown(src string, width int) string {
	source := []byte(Sanitize(src))
	doc := markdownParser().Parse(text.NewReader(source))
	r := &ansiRenderer{cs: NewColorScheme(true), src: source, width: max(width-2, 20)}
	r.blocks(doc, "")
	return strings.TrimRight(r.out.String(), "\n") + "\n"
}

type ansiRenderer struct {
	cs    *ColorScheme
	src   []byte
	width int
	out   bytes.Buffer
}

// blocks renders the block children of n, each line prefixed by indent.
func (r *ansiRenderer) blocks(n ast.Node, indent string) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c.PreviousSibling() != nil {
			r.out.WriteString("\n")
		}
		r.block(c, indent)
	}
}

func (r *ansiRenderer) block(n ast.Node, indent string) {
	switch n := n.(type) {
	case *ast.Heading:
		r.wrap(indent, r.cs.Bold(strings.Repeat("#", n.Level)+" "+r.inline(n)))
	case *ast.Paragraph, *ast.TextBlock:
		r.wrap(indent, r.inline(n))
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			r.out.WriteString(indent + "  " + r.cs.Cyan(strings.TrimRight(string(seg.Value(r.src)), "\n")) + "\n")
		}
	case *ast.Blockquote:
		r.blocks(n, indent+r.cs.Gray("│ "))
	case *ast.List:
		i := n.Start
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			bullet := "• "
			if n.IsOrdered() {
				bullet = strconv.Itoa(i) + ". "
				i++
			}
			var sub ansiRenderer
			pad := strings.Repeat(" ", ansi.StringWidth(bullet))
			sub.cs, sub.src, sub.width = r.cs, r.src, r.width-ansi.StringWidth(indent)-len(pad)
			sub.blocks(item, "")
			for j, line := range strings.Split(strings.TrimRight(sub.out.String(), "\n"), "\n") {
				if j == 0 {
					r.out.WriteString(indent + bullet + line + "\n")
				} else {
					r.out.WriteString(indent + pad + line + "\n")
				}
			}
		}
	case *ast.ThematicBreak:
		r.out.WriteString(indent + r.cs.Gray(strings.Repeat("─", min(r.width, 40))) + "\n")
	case *east.Table:
		r.table(n, indent)
	default:
		if n.HasChildren() {
			r.blocks(n, indent)
		}
	}
}

// inline renders the inline children of n as one string.
func (r *ansiRenderer) inline(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(r.src))
			// A chat message's single newlines are line breaks, as its
			// writer saw them and as the dashboard shows them.
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte('\n')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			b.WriteString(r.cs.Cyan(r.inline(c)))
		case *ast.Emphasis:
			style := r.cs.Italic
			if c.Level >= 2 {
				style = r.cs.Bold
			}
			b.WriteString(style(r.inline(c)))
		case *ast.Link:
			label := r.inline(c)
			b.WriteString(label)
			if dest := string(c.Destination); dest != "" && dest != label {
				b.WriteString(r.cs.Gray(" (" + dest + ")"))
			}
		case *ast.AutoLink:
			b.Write(c.URL(r.src))
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				b.Write(seg.Value(r.src))
			}
		default:
			b.WriteString(r.inline(c))
		}
	}
	return b.String()
}

// wrap writes s word-wrapped to the width, counting terminal cells.
func (r *ansiRenderer) wrap(indent, s string) {
	for _, para := range strings.Split(s, "\n") {
		line, visible := "", 0
		for _, w := range strings.Fields(para) {
			n := ansi.StringWidth(w)
			if visible > 0 && visible+1+n > r.width {
				r.out.WriteString(indent + line + "\n")
				line, visible = "", 0
			}
			if visible > 0 {
				line += " "
				visible++
			}
			line += w
			visible += n
		}
		r.out.WriteString(indent + line + "\n")
	}
}

// table writes a table as aligned columns under a bold header, each
// column as wide as its widest cell; when that is wider than the terminal
// the widest columns are cut (with …) until it fits.
func (r *ansiRenderer) table(t *east.Table, indent string) {
	var rows [][]string
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, strings.ReplaceAll(r.inline(c), "\n", " "))
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		return
	}
	widths := make([]int, len(t.Alignments))
	for _, row := range rows {
		for i, c := range row {
			if i < len(widths) {
				widths[i] = max(widths[i], ansi.StringWidth(c))
			}
		}
	}
	const sep = " │ "
	avail := r.width - ansi.StringWidth(indent) - len([]rune(sep))*(len(widths)-1)
	for total(widths) > avail {
		widest := 0
		for i, w := range widths {
			if w > widths[widest] {
				widest = i
			}
		}
		if widths[widest] <= 4 {
			break
		}
		widths[widest]--
	}
	line := func(cells []string, style func(string) string) {
		fields := make([]string, len(widths))
		for i, w := range widths {
			c := ""
			if i < len(cells) {
				c = ansi.Truncate(cells[i], w, "…")
			}
			pad := strings.Repeat(" ", w-ansi.StringWidth(c))
			switch t.Alignments[i] {
			case east.AlignRight:
				c = pad + c
			case east.AlignCenter:
				c = pad[:len(pad)/2] + c + pad[len(pad)/2:]
			default:
				c += pad
			}
			if i == len(widths)-1 {
				c = strings.TrimRight(c, " ")
			}
			if style != nil {
				c = style(c)
			}
			fields[i] = c
		}
		r.out.WriteString(indent + strings.Join(fields, r.cs.Gray(sep)) + "\n")
	}
	line(rows[0], r.cs.Bold)
	rule := make([]string, len(widths))
	for i, w := range widths {
		rule[i] = strings.Repeat("─", w)
	}
	r.out.WriteString(indent + r.cs.Gray(strings.Join(rule, "─┼─")) + "\n")
	for _, row := range rows[1:] {
		line(row, nil)
	}
}

func total(ns []int) int {
	sum := 0
	for _, n := range ns {
		sum += n
	}
	return sum
}
