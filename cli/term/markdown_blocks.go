package term

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// CompleteBlocks returns how much of src, Markdown still being written,
// is finished: src[:n] holds whole top-level blocks that no text added to
// src can change, and src[n:] the block still being written (possibly
// empty). Rendered on its own, src[:n] gives what it gives inside the
// whole text, so a reply can be rendered block by block as it streams
// and what is printed is final: RenderMarkdown of the pieces, joined by
// one empty line, is RenderMarkdown of the whole (a link whose
// reference definition comes in a later block aside).
//
// A block is finished when the next one has begun, or sooner when
// nothing can extend it: a heading, a thematic break, a closed code
// fence, a paragraph, quote or table ended by an empty line. A list is
// finished only when a block that is not part of it begins, since an
// empty line may be followed by its next item.
func CompleteBlocks(src string) int {
	end := strings.LastIndexByte(src, '\n') + 1
	if end == 0 {
		return 0
	}
	head := src[:end]
	n, last := topBlocks(head)
	if n == 0 {
		return 0
	}
	if closable(last) {
		// A line of plain text starts a block of its own only after a
		// block that cannot take it in.
		if m, _ := topBlocks(head + "x\n"); m > n {
			return end
		}
	}
	if n < 2 {
		return 0
	}
	// The last block starts on the first line whose prefix holds n
	// blocks; a prefix never holds fewer blocks than a shorter one.
	starts := []int{0}
	for i := 0; i < len(head)-1; i++ {
		if head[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	lo, hi := 1, len(starts) // prefixes of lo..hi lines
	for lo < hi {
		mid := (lo + hi) / 2
		if m, _ := topBlocks(head[:lineEnd(head, starts, mid)]); m >= n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return starts[lo-1]
}

// lineEnd is the offset just past the k-th line (k counted from 1).
func lineEnd(s string, starts []int, k int) int {
	if k < len(starts) {
		return starts[k]
	}
	return len(s)
}

// closable reports whether a block of this kind can be finished before
// the next block begins. A list may go on after an empty line, and so
// may an indented code block.
func closable(n ast.Node) bool {
	switch n.(type) {
	case *ast.List, *ast.CodeBlock:
		return false
	}
	return true
}

// topBlocks parses src and returns its number of top-level blocks and
// the last of them.
func topBlocks(src string) (int, ast.Node) {
	doc := markdownParser().Parse(text.NewReader([]byte(src)))
	// Counted by walking: ChildCount is not kept up to date when a
	// table replaces the paragraph it was read from.
	n := 0
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		n++
	}
	return n, doc.LastChild()
}

// markdownParser reads Markdown as RenderMarkdown does: CommonMark with
// strikethrough and tables.
func markdownParser() parser.Parser {
	return goldmark.New(goldmark.WithExtensions(extension.Strikethrough, extension.Table)).Parser()
}
