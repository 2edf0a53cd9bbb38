package cli

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// renderMarkdown renders a reply for a terminal: headings and strong text
// bold, emphasis italic, code cyan, lists with bullets, quotes with a bar,
// and paragraphs wrapped to width. It is small on purpose: a full
// renderer with syntax highlighting costs every loom process (even
// `session list`) tens of milliseconds to start.
func renderMarkdown(src string, width int) (string, bool) {
	md := goldmark.New(goldmark.WithExtensions(extension.Strikethrough, extension.Table))
	source := []byte(src)
	doc := md.Parser().Parse(text.NewReader(source))
	r := &ansiRenderer{src: source, width: max(width-2, 20)}
	r.blocks(doc, "")
	return strings.TrimRight(r.out.String(), "\n") + "\n", true
}

type ansiRenderer struct {
	src   []byte
	width int
	out   bytes.Buffer
}

const (
	ansiBold   = "\x1b[1m"
	ansiItalic = "\x1b[3m"
	ansiCyan   = "\x1b[36m"
	ansiGray   = "\x1b[90m"
	ansiReset  = "\x1b[0m"
)

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
		r.wrap(indent, ansiBold+strings.Repeat("#", n.Level)+" "+r.inline(n)+ansiReset)
	case *ast.Paragraph, *ast.TextBlock:
		r.wrap(indent, r.inline(n))
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			r.out.WriteString(indent + "  " + ansiCyan + strings.TrimRight(string(seg.Value(r.src)), "\n") + ansiReset + "\n")
		}
	case *ast.Blockquote:
		r.blocks(n, indent+ansiGray+"│ "+ansiReset)
	case *ast.List:
		i := n.Start
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			bullet := "• "
			if n.IsOrdered() {
				bullet = strconv.Itoa(i) + ". "
				i++
			}
			var sub ansiRenderer
			pad := strings.Repeat(" ", utf8.RuneCountInString(bullet))
			sub.src, sub.width = r.src, r.width-utf8.RuneCountInString(stripANSI(indent))-len(pad)
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
		r.out.WriteString(indent + ansiGray + strings.Repeat("─", min(r.width, 40)) + ansiReset + "\n")
	case *east.Table:
		// Tables stay as their source text, which is already aligned
		// enough to read.
		r.out.WriteString(indent + strings.TrimSpace(string(r.rawText(n))) + "\n")
	default:
		if n.HasChildren() {
			r.blocks(n, indent)
		}
	}
}

func (r *ansiRenderer) rawText(n ast.Node) []byte {
	var b bytes.Buffer
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(t.Segment.Value(r.src))
			if t.SoftLineBreak() || t.HardLineBreak() {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		return ast.WalkContinue, nil
	})
	return b.Bytes()
}

// inline renders the inline children of n as one string.
func (r *ansiRenderer) inline(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(r.src))
			if c.SoftLineBreak() {
				b.WriteByte(' ')
			}
			if c.HardLineBreak() {
				b.WriteByte('\n')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			b.WriteString(ansiCyan + r.inline(c) + ansiReset)
		case *ast.Emphasis:
			style := ansiItalic
			if c.Level >= 2 {
				style = ansiBold
			}
			b.WriteString(style + r.inline(c) + ansiReset)
		case *ast.Link:
			label := r.inline(c)
			b.WriteString(label)
			if dest := string(c.Destination); dest != "" && dest != label {
				b.WriteString(ansiGray + " (" + dest + ")" + ansiReset)
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

// wrap writes s word-wrapped to the width, counting only visible runes.
func (r *ansiRenderer) wrap(indent, s string) {
	for _, para := range strings.Split(s, "\n") {
		line, visible := "", 0
		for _, w := range strings.Fields(para) {
			n := len([]rune(stripANSI(w)))
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
