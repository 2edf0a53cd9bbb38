package htmlview

import (
	"bytes"
	"html/template"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// markdown renders message text. Dangerous link targets (javascript: …)
// are removed, which goldmark does unless told it may not; raw HTML in
// the text is shown as the text it is (see rawHTMLAsText). It is built
// when first used: only the pages and exports that show a session do.
var markdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		// A chat message's single newlines are line breaks, as its
		// writer saw them, not joined into one paragraph.
		goldmark.WithRendererOptions(html.WithHardWraps()),
		// goldmark's own renderer has priority 1000; a lower number is
		// registered later and wins for the kinds it renders.
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(rawHTMLAsText{}, 100))),
	)
})

// Markdown turns a message's Markdown into safe HTML.
func Markdown(text string) template.HTML {
	var b bytes.Buffer
	if err := markdown().Convert([]byte(text), &b); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(text) + "</pre>")
	}
	return template.HTML(b.String())
}

// rawHTMLAsText renders the HTML a message's Markdown holds escaped, as
// visible text. A message is data: someone who writes <img onerror=…>
// into a chat sees it as they wrote it, and goldmark's default, dropping
// it for a comment, would hide what was said.
type rawHTMLAsText struct{}

func (rawHTMLAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
}

func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		segs := node.(*ast.RawHTML).Segments
		for i := range segs.Len() {
			seg := segs.At(i)
			w.Write(util.EscapeHTML(seg.Value(source)))
		}
	}
	return ast.WalkSkipChildren, nil
}

func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.HTMLBlock)
	var raw []byte
	lines := n.Lines()
	for i := range lines.Len() {
		line := lines.At(i)
		raw = append(raw, line.Value(source)...)
	}
	if n.HasClosure() {
		raw = append(raw, n.ClosureLine.Value(source)...)
	}
	w.WriteString(`<p class="raw-html">`)
	w.Write(util.EscapeHTML(bytes.TrimRight(raw, "\r\n")))
	w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}
