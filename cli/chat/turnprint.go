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
// arrives; on a terminal also a spinner while waiting and tool calls as
// they run. On a terminal with colour the reply is rendered as Markdown
// as it streams, block by block (liveBlocks), and so is the reasoning
// with /thinking on (in the thinking gutter, on stderr). What the model
// wrote is escaped for the terminal (term.Sanitize) wherever it is shown
// on one; piped, the reply is written exactly, for scripts to use.
type turnPrinter struct {
	ios          *term.IOStreams
	showThinking bool

	mu      sync.Mutex
	started bool // any text printed
	// reply and thinking render what streams on a terminal with colour;
	// nil until text of theirs comes, and always nil elsewhere.
	reply, thinking *liveBlocks
	// rendered is whether reply and thinking are rendered as they stream.
	rendered bool
	// last is the text written last on stdout when the reply is not
	// rendered, to end its line.
	last string
	// thinkingRaw is whether reasoning shown raw has not ended its line.
	thinkingRaw bool
	// text receives the reply when it is not rendered: escaped on a
	// terminal, else exactly.
	text     io.Writer
	san      *term.Sanitizer
	spinStop chan struct{}
	spinDone chan struct{}
}

func newTurnPrinter(ios *term.IOStreams, showThinking bool) *turnPrinter {
	p := &turnPrinter{ios: ios, showThinking: showThinking}
	p.rendered = ios.IsStdoutTTY() && ios.ColorEnabled()
	p.text = ios.Out
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
		if !p.rendered {
			io.WriteString(p.text, e.Text)
			if e.Text != "" {
				p.last = e.Text
			}
			return
		}
		if p.reply == nil {
			p.reply = newLiveBlocks(p.ios.Out, p.ios.TerminalWidth(), p.ios.TerminalHeight(), term.RenderMarkdown, "\n")
		}
		p.reply.write(e.Text)
	case loom.EventReasoning:
		if !p.showThinking {
			return
		}
		p.stopSpinner()
		if !p.ios.IsStderrTTY() || !p.ios.ColorEnabled() {
			shown := term.Sanitize(e.Text)
			fmt.Fprint(p.ios.ErrOut, cs.Gray(shown))
			if shown != "" {
				p.thinkingRaw = !strings.HasSuffix(shown, "\n")
			}
			return
		}
		if p.reply != nil {
			// Reasoning amid the reply goes below what is printed of it;
			// the reply's live area comes back under it with its text.
			p.reply.hide()
		}
		if p.thinking == nil {
			block := func(src string, width int) string { return command.ThinkingBlock(cs, src, width) }
			p.thinking = newLiveBlocks(p.ios.ErrOut, p.ios.TerminalWidth(), p.ios.TerminalHeight(), block, cs.Gray("│ ")+"\n")
		}
		p.thinking.write(e.Text)
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
		p.aside(func() {
			fmt.Fprintln(p.ios.ErrOut, cs.Gray("(earlier messages were summarised to fit the context; history is kept)"))
		})
	}
}

// note prints a line to stderr while the turn runs, clear of the
// spinner, which goes on after it.
func (p *turnPrinter) note(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	spinning := p.spinStop != nil
	p.stopSpinner()
	p.aside(func() { fmt.Fprintln(p.ios.ErrOut, line) })
	if spinning {
		p.begin()
	}
}

// aside prints with print clear of the block being written: its live
// area is erased, and shown again below.
func (p *turnPrinter) aside(print func()) {
	for _, l := range []*liveBlocks{p.reply, p.thinking} {
		if l != nil {
			l.hide()
		}
	}
	print()
	for _, l := range []*liveBlocks{p.reply, p.thinking} {
		if l != nil {
			l.resume()
		}
	}
}

// breakLine ends the reply text so far, before a tool's line: what the
// model wrote before calling a tool is whole.
func (p *turnPrinter) breakLine() {
	p.flushText()
	if p.reply != nil {
		p.reply.finish()
		p.reply = nil
	}
	if p.last != "" && !strings.HasSuffix(p.last, "\n") {
		fmt.Fprintln(p.ios.Out)
	}
	p.last = ""
}

// end finishes the reply: its last block printed rendered, or a final
// newline.
func (p *turnPrinter) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopSpinner()
	p.endThinking()
	if !p.started {
		return
	}
	p.breakLine()
}

// endThinking ends the reasoning shown as it streamed: its last block
// printed rendered, or its line ended.
func (p *turnPrinter) endThinking() {
	if p.thinking != nil {
		p.thinking.finish()
		p.thinking = nil
	}
	if p.thinkingRaw {
		fmt.Fprintln(p.ios.ErrOut)
		p.thinkingRaw = false
	}
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
