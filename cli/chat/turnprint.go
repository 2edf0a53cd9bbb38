package chat

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// turnPrinter shows a running turn: streamed text on stdout as it
// arrives; on a terminal also a spinner while waiting, tool calls as they
// run, and the finished reply rendered as Markdown. What the model wrote
// is escaped for the terminal (term.Sanitize) wherever it is shown on
// one; piped, the reply is written exactly, for scripts to use.
type turnPrinter struct {
	ios          *term.IOStreams
	showThinking bool

	mu      sync.Mutex
	started bool // any text printed
	// buf is the reply text as shown on stdout.
	buf strings.Builder
	// thinking is the reasoning shown so far and not yet redrawn.
	thinking strings.Builder
	// text receives the reply: escaped into stdout and buf on a
	// terminal, else straight into both.
	text     io.Writer
	san      *term.Sanitizer
	spinStop chan struct{}
	spinDone chan struct{}
}

func newTurnPrinter(ios *term.IOStreams, showThinking bool) *turnPrinter {
	p := &turnPrinter{ios: ios, showThinking: showThinking}
	p.text = io.MultiWriter(ios.Out, &p.buf)
	if ios.IsStdoutTTY() {
		p.san = term.SanitizingWriter(p.text)
		p.text = p.san
	}
	return p
}

// flushText writes what the escaping writer holds back.
func (p *turnPrinter) flushText() {
	if p.san != nil {
		p.san.Flush()
	}
}

// begin starts the spinner (on a terminal).
func (p *turnPrinter) begin() {
	if !p.ios.IsStderrTTY() || !p.ios.IsStdoutTTY() {
		return
	}
	p.spinStop, p.spinDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.spinDone)
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		t := time.NewTicker(90 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(p.ios.ErrOut, "\r%s thinking…", frames[i%len(frames)])
			select {
			case <-p.spinStop:
				fmt.Fprint(p.ios.ErrOut, "\r"+ansi.EraseLineRight)
				return
			case <-t.C:
			}
		}
	}()
}

func (p *turnPrinter) stopSpinner() {
	if p.spinStop != nil {
		close(p.spinStop)
		<-p.spinDone
		p.spinStop = nil
	}
}

// event handles one agent event.
func (p *turnPrinter) event(e agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cs := p.ios.ColorScheme()
	switch e.Kind {
	case loom.EventText:
		p.stopSpinner()
		p.endThinking()
		p.started = true
		io.WriteString(p.text, e.Text)
	case loom.EventReasoning:
		if p.showThinking {
			p.stopSpinner()
			shown := term.Sanitize(e.Text)
			p.thinking.WriteString(shown)
			fmt.Fprint(p.ios.ErrOut, cs.Gray(shown))
		}
	case agent.EventToolStart:
		if p.ios.IsStderrTTY() {
			p.stopSpinner()
			p.endThinking()
			p.breakLine()
			fmt.Fprintf(p.ios.ErrOut, "%s %s %s\n", cs.Cyan("⚙"), cs.Bold(term.SanitizeLine(e.Tool)), cs.Gray(command.Truncate(term.SanitizeLine(e.Input), 80)))
		}
	case agent.EventToolEnd:
		if p.ios.IsStderrTTY() {
			status := cs.Green(term.SanitizeLine(e.Status))
			if e.Status != loom.ToolCompleted {
				status = cs.Red(term.SanitizeLine(e.Status + ": " + e.Text))
			}
			fmt.Fprintf(p.ios.ErrOut, "  %s %s %s\n", cs.Bold(term.SanitizeLine(e.Tool)), status, cs.Gray(human.Duration(e.Duration)))
			p.begin()
		}
	case agent.EventCompacted:
		p.stopSpinner()
		p.endThinking()
		fmt.Fprintln(p.ios.ErrOut, cs.Gray("(earlier messages were summarised to fit the context; history is kept)"))
	}
}

// note prints a line to stderr while the turn runs, clear of the
// spinner, which goes on after it.
func (p *turnPrinter) note(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	spinning := p.spinStop != nil
	p.stopSpinner()
	fmt.Fprintln(p.ios.ErrOut, line)
	if spinning {
		p.begin()
	}
}

// breakLine ends a partly printed line of reply text.
func (p *turnPrinter) breakLine() {
	p.flushText()
	if p.started && !strings.HasSuffix(p.buf.String(), "\n") {
		fmt.Fprintln(p.ios.Out)
		p.buf.Reset()
	}
}

// end finishes the reply: a final newline, and on a terminal the reply
// redrawn as rendered Markdown when it fits on the screen.
func (p *turnPrinter) end(final string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopSpinner()
	p.endThinking()
	p.flushText()
	if !p.started {
		return
	}
	if p.ios.ColorEnabled() && final != "" && strings.TrimSpace(p.buf.String()) == strings.TrimSpace(term.Sanitize(final)) &&
		redraw(p.ios.Out, p.buf.String(), term.RenderMarkdown(final, p.ios.TerminalWidth()), p.ios.TerminalWidth(), p.ios.TerminalHeight()) {
		return
	}
	if !strings.HasSuffix(p.buf.String(), "\n") {
		fmt.Fprintln(p.ios.Out)
	}
}

// endThinking ends the reasoning shown as it streamed: on a terminal it
// is redrawn as rendered Markdown (thinkingBlock), as the reply is.
func (p *turnPrinter) endThinking() {
	shown := p.thinking.String()
	if shown == "" {
		return
	}
	p.thinking.Reset()
	w := p.ios.TerminalWidth()
	if p.ios.IsStderrTTY() && p.ios.ColorEnabled() && redraw(p.ios.ErrOut, shown, command.ThinkingBlock(p.ios.ColorScheme(), shown, w), w, p.ios.TerminalHeight()) {
		return
	}
	if !strings.HasSuffix(shown, "\n") {
		fmt.Fprintln(p.ios.ErrOut)
	}
}

// redraw replaces shown, the text just written to w with the cursor at
// its end, by rendered, when shown fits on the screen of height rows; it
// reports whether it did. Text that scrolled past the top of the screen
// cannot be reached by moving the cursor up: redrawing it would leave
// its top in the scrollback above the rendered copy, the reply printed
// twice.
func redraw(w io.Writer, shown, rendered string, width, height int) bool {
	lines := screenLines(shown, width)
	if lines >= height {
		return false
	}
	fmt.Fprint(w, "\r"+cursorUp(lines-1)+ansi.EraseScreenBelow+rendered)
	return true
}

// cursorUp moves the cursor n lines up. Zero is no move at all: a
// terminal reads ESC[0A as one line up, which would erase the line above
// a one-line reply (the user's prompt).
func cursorUp(n int) string {
	if n <= 0 {
		return ""
	}
	return ansi.CursorUp(n)
}

// screenLines counts the terminal lines text occupies at width, measured
// in cells (a wide character takes two).
func screenLines(text string, width int) int {
	if width <= 0 {
		width = 80
	}
	n := 0
	for _, line := range strings.Split(text, "\n") {
		w := ansi.StringWidth(line)
		n += max(1, (w+width-1)/width)
	}
	return n
}
