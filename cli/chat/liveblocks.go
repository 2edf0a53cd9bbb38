package chat

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/loomhq/loom/cli/term"
)

// liveBlocks prints Markdown that streams onto a terminal rendered, block
// by block: each block is printed rendered once it is finished
// (term.CompleteBlocks), and never again, so what scrolls off the top
// of the screen is final. The block still being written is shown below,
// rendered as far as its lines go with the line being written raw after
// them, in a live area that is redrawn as it grows and erased when the
// finished block takes its place. The live area never grows taller than
// the screen, so it is always within reach of the cursor: of a taller
// block it shows the last lines, and the whole is printed when it ends.
type liveBlocks struct {
	w      io.Writer
	width  int
	height int
	// render renders Markdown at width; sep goes between two rendered
	// blocks (an empty line, or the thinking gutter's).
	render func(src string, width int) string
	sep    string

	pending string // the text of the block being written
	printed bool   // a block was printed
	// live is what the live area shows, ending with the line the cursor
	// is on (empty just after a newline).
	live string
	// behind is whether text of the line being written was left out of
	// the live area (it did not fit): what comes after it waits for the
	// next redraw.
	behind bool
}

func newLiveBlocks(w io.Writer, width, height int, render func(string, int) string, sep string) *liveBlocks {
	return &liveBlocks{w: w, width: width, height: height, render: render, sep: sep}
}

// write takes text as it streams.
func (l *liveBlocks) write(s string) {
	l.pending += s
	if !strings.Contains(s, "\n") && !strings.Contains(s, "\t") && l.live != "" {
		// The line being written grows: shown as it comes while it fits.
		shown := term.Sanitize(s)
		if !l.behind && l.fits(l.live+shown) {
			fmt.Fprint(l.w, shown)
			l.live += shown
		} else {
			l.behind = true
		}
		return
	}
	if n := term.CompleteBlocks(l.pending); n > 0 {
		done := l.pending[:n]
		l.pending = l.pending[n:]
		l.print(done)
	}
	l.show(l.preview())
}

// finish prints what is left rendered: the text has ended.
func (l *liveBlocks) finish() {
	rest := l.pending
	l.pending = ""
	l.print(rest)
	l.show("")
}

// hide erases the live area, for other output to go where it was; show
// (the next write does) puts it back below that output.
func (l *liveBlocks) hide() {
	l.show("")
}

// resume shows the live area again after hide.
func (l *liveBlocks) resume() {
	l.show(l.preview())
}

// print replaces the live area by the finished Markdown src rendered.
func (l *liveBlocks) print(src string) {
	if strings.TrimSpace(src) == "" {
		return
	}
	out := l.render(src, l.width)
	if strings.TrimSpace(ansi.Strip(out)) == "" {
		return
	}
	l.show("")
	if l.printed {
		out = l.sep + out
	}
	fmt.Fprint(l.w, out)
	l.printed = true
}

// preview is what the live area shows of the block being written: its
// whole lines rendered and the line being written raw, the last lines
// only of a block taller than the screen.
func (l *liveBlocks) preview() string {
	if strings.TrimSpace(l.pending) == "" {
		return ""
	}
	cut := strings.LastIndexByte(l.pending, '\n') + 1
	var b strings.Builder
	if l.printed {
		b.WriteString(l.sep)
	}
	if strings.TrimSpace(l.pending[:cut]) != "" {
		b.WriteString(l.render(l.pending[:cut], l.width))
	}
	b.WriteString(term.Sanitize(l.pending[cut:]))
	lines := strings.Split(b.String(), "\n")
	// The last lines that fit, counted from the end.
	first, rows := len(lines), 0
	for first > 0 {
		lines[first-1] = expandTabs(lines[first-1])
		r := screenLines(lines[first-1], l.width)
		if rows+r >= l.height {
			break
		}
		first, rows = first-1, rows+r
	}
	return strings.Join(lines[first:], "\n")
}

// expandTabs replaces the tabs of a line (a code block's indentation)
// by the spaces a terminal would move over, so that the live area's
// height is counted right.
func expandTabs(line string) string {
	if !strings.Contains(line, "\t") {
		return line
	}
	var b strings.Builder
	col := 0
	for i, seg := range strings.Split(line, "\t") {
		if i > 0 {
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
		}
		b.WriteString(seg)
		col += ansi.StringWidth(seg)
	}
	return b.String()
}

// fits reports whether text, shown from the start of a line, stays
// within the screen with a line to spare: the live area must never
// scroll its own top out of reach.
func (l *liveBlocks) fits(text string) bool {
	return screenLines(text, l.width) < l.height
}

// show makes the live area show next, redrawing it from the first line
// that differs from what it shows now.
func (l *liveBlocks) show(next string) {
	l.behind = false
	if next == l.live {
		return
	}
	old := strings.Split(l.live, "\n")
	nl := strings.Split(next, "\n")
	same := 0
	// The line the cursor is on is redrawn unless next only adds to it.
	for same < len(old)-1 && same < len(nl)-1 && old[same] == nl[same] {
		same++
	}
	if same == len(old)-1 && strings.HasPrefix(nl[same], old[same]) && l.live != "" {
		fmt.Fprint(l.w, strings.TrimPrefix(strings.Join(nl[same:], "\n"), old[same]))
		l.live = next
		return
	}
	up := screenLines(l.live, l.width) - 1 - screenLines(strings.Join(old[:same], "\n"), l.width)
	if same == 0 {
		up = screenLines(l.live, l.width) - 1
	}
	fmt.Fprint(l.w, "\r"+cursorUp(up)+ansi.EraseScreenBelow+strings.Join(nl[same:], "\n"))
	l.live = next
}
