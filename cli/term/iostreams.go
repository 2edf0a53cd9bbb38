package term

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/ansi"
	xterm "golang.org/x/term"
)

// IOStreams are the standard streams of a command, with what is known
// about them: whether each end is a terminal, how wide it is, and whether
// colour may be used. Commands decide between tables and tab-separated
// text, and whether they may ask questions, from these alone, so tests
// drive every branch with buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY  bool
	stdoutTTY bool
	stderrTTY bool
	// width and height are the terminal's size; 0 means not a terminal
	// or unknown.
	width, height int
	// colorOff is set by --no-color and NO_COLOR.
	colorOff bool
	// inReader buffers In for line prompts, so that answers typed
	// ahead are not lost between two questions.
	inReader *bufio.Reader
}

// System returns the process's streams.
func System() *IOStreams {
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	s.stdinTTY = xterm.IsTerminal(int(os.Stdin.Fd()))
	s.stdoutTTY = xterm.IsTerminal(int(os.Stdout.Fd()))
	s.stderrTTY = xterm.IsTerminal(int(os.Stderr.Fd()))
	if s.stdoutTTY {
		if w, h, err := xterm.GetSize(int(os.Stdout.Fd())); err == nil {
			s.width, s.height = w, h
		}
	}
	return s
}

// Test returns streams on buffers, none of them a terminal, and the
// buffers.
func Test() (s *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// IsStdinTTY reports whether standard input is a terminal.
func (s *IOStreams) IsStdinTTY() bool { return s.stdinTTY }

// IsStdoutTTY reports whether standard output is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether standard error is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetStdinTTY overrides terminal detection of standard input (for tests).
func (s *IOStreams) SetStdinTTY(v bool) { s.stdinTTY = v }

// SetStdoutTTY overrides terminal detection of standard output (for
// tests). A terminal without a known width is taken as 80 columns wide.
func (s *IOStreams) SetStdoutTTY(v bool) {
	s.stdoutTTY = v
	if v && s.width == 0 {
		s.width = 80
	}
}

// SetWidth sets the terminal's width (for tests).
func (s *IOStreams) SetWidth(w int) { s.width = w }

// TerminalHeight returns the number of rows of the terminal on standard
// output, 24 when it is not known.
func (s *IOStreams) TerminalHeight() int {
	if s.height > 0 {
		return s.height
	}
	return 24
}

// SetStderrTTY overrides terminal detection of standard error (for tests).
func (s *IOStreams) SetStderrTTY(v bool) { s.stderrTTY = v }

// CanPrompt reports whether the command may ask the user a question:
// only when both input and output are a terminal, so a script never
// hangs on a question nobody sees.
func (s *IOStreams) CanPrompt() bool { return s.stdinTTY && s.stdoutTTY }

// TerminalWidth returns the width of the terminal on standard output, 80
// when it is unknown.
func (s *IOStreams) TerminalWidth() int {
	if s.width > 0 {
		return s.width
	}
	return 80
}

// WrapErr wraps text for standard error: at word boundaries to the
// terminal's width on a terminal, unchanged when piped, so that scripts
// read one line.
func (s *IOStreams) WrapErr(text string) string {
	if !s.stderrTTY {
		return text
	}
	return wordwrap(text, s.TerminalWidth())
}

// ErrWrapped is standard error through WrapErr: each write, a line or
// a few that a command prints at once, wrapped at words to the terminal.
func (s *IOStreams) ErrWrapped() io.Writer { return errWrapped{s} }

type errWrapped struct{ s *IOStreams }

func (w errWrapped) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.s.ErrOut, w.s.WrapErr(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WrapErrHanging wraps text for stderr as WrapErr does, but a line that
// is wider than the terminal goes on at column indent (the column its
// description starts at, in a list of commands and what they do), and
// a line is broken at spaces only.
func (s *IOStreams) WrapErrHanging(text string, indent int) string {
	width := s.TerminalWidth()
	if !s.stderrTTY || width <= indent+20 {
		return s.WrapErr(text)
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) <= width {
			continue
		}
		if len(l) <= indent || strings.TrimSpace(l[indent-1:indent]) != "" {
			lines[i] = wordwrap(l, width)
			continue
		}
		body := strings.Split(wordwrap(l[indent:], width-indent), "\n")
		lines[i] = l[:indent] + strings.Join(body, "\n"+strings.Repeat(" ", indent))
	}
	return strings.Join(lines, "\n")
}

// WrapOut wraps text for standard output: on a terminal, each line
// wider than it at spaces, going on at column indent, so that the
// terminal never breaks a word; unchanged when piped.
func (s *IOStreams) WrapOut(text string, indent int) string {
	width := s.TerminalWidth()
	if !s.stdoutTTY || width <= indent+20 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) <= width {
			continue
		}
		lead := leadingSpaces(l)
		body := strings.Split(wordwrap(l[lead:], width-max(lead, indent)), "\n")
		lines[i] = l[:lead] + strings.Join(body, "\n"+strings.Repeat(" ", indent))
	}
	return strings.Join(lines, "\n")
}

// ResumeHint prints, on stderr, the command that resumes a session: on
// one line when it fits the terminal, else the command on a line of its
// own, so that the terminal never breaks the id in two.
func (s *IOStreams) ResumeHint(command string) {
	line := "resume this session with: " + command
	if s.stderrTTY && ansi.StringWidth(line) > s.TerminalWidth() {
		line = "resume this session with:\n  " + command
	}
	fmt.Fprintln(s.ErrOut, line)
}

// nbHyphen stands in for a hyphen while text is wrapped: the wrapper
// breaks after every hyphen, which cut model names ("gpt-4o-" / "mini"),
// ids and flags in two.
const nbHyphen = "\u2011"

// wordwrap wraps text at spaces to width cells, never inside a word.
func wordwrap(text string, width int) string {
	if !strings.Contains(text, "-") {
		return ansi.Wordwrap(text, width, "")
	}
	return strings.ReplaceAll(ansi.Wordwrap(strings.ReplaceAll(text, "-", nbHyphen), width, ""), nbHyphen, "-")
}

// SetColorEnabled turns colour off (false) whatever the terminal.
func (s *IOStreams) SetColorEnabled(v bool) { s.colorOff = !v }

// ColorEnabled reports whether output may be coloured: on a terminal,
// unless --no-color or NO_COLOR said otherwise.
func (s *IOStreams) ColorEnabled() bool { return s.stdoutTTY && !s.colorOff }

// ColorScheme returns the colours to use on standard output.
func (s *IOStreams) ColorScheme() *ColorScheme { return NewColorScheme(s.ColorEnabled()) }
