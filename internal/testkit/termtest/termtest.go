// Package termtest runs a program on a pseudo-terminal for tests and keeps
// two views of what it wrote: the whole stream without escape sequences
// (was this ever printed?) and the screen a terminal of that size would
// show now (is it still there?), the latter through a VT100 emulator so
// that cursor movements and erasures count.
package termtest

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	"github.com/hinshun/vt10x"
)

// Timeout is how long WaitFor and Wait wait before failing the test.
const Timeout = 15 * time.Second

// Term is a program running on a pseudo-terminal.
type Term struct {
	cmd  *exec.Cmd
	tty  *os.File
	done chan struct{}

	mu  sync.Mutex
	raw strings.Builder
	vt  vt10x.Terminal
}

// Start runs cmd on a new pseudo-terminal of cols × rows and stops it when
// the test ends.
func Start(t testing.TB, cmd *exec.Cmd, cols, rows int) *Term {
	t.Helper()
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)})
	if err != nil {
		t.Fatalf("start %s on a terminal: %v", cmd.Path, err)
	}
	p := &Term{cmd: cmd, tty: tty, done: make(chan struct{}), vt: vt10x.New(vt10x.WithSize(cols, rows))}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf) // ends with EIO when the process exits
			if n > 0 {
				p.mu.Lock()
				p.raw.Write(buf[:n])
				p.vt.Write(keyboardProtocol.ReplaceAll(buf[:n], nil))
				p.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		tty.Close()
	})
	return p
}

// keyboardProtocol matches the kitty keyboard protocol's requests (CSI
// > flags u, CSI < u, CSI = flags ; mode u, CSI ? u), which terminals
// without that protocol ignore and the emulator would misread as
// "restore the cursor". A request split across two reads is rare enough
// in tests to leave alone.
var keyboardProtocol = regexp.MustCompile(`\x1b\[[<>=?][0-9;]*u`)

// Send types s on the terminal's keyboard ("\r" is Enter, "\x03" Ctrl+C,
// "\x04" Ctrl+D).
func (p *Term) Send(s string) {
	io.WriteString(p.tty, s)
}

// Raw is everything the program wrote, escape sequences included.
func (p *Term) Raw() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.raw.String()
}

// Output is everything the program wrote, without escape sequences.
func (p *Term) Output() string { return ansi.Strip(p.Raw()) }

// Screen is what the terminal shows now: its rows, trailing blanks and
// trailing empty rows removed.
func (p *Term) Screen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return screen(p.vt)
}

// History is all a user can read on the terminal now, scrolling back:
// the lines that scrolled off the top of the screen, oldest first, then
// the screen as Screen gives it. Text redrawn in place counts once; text
// printed again below counts again; a line that scrolled off stays as it
// was when it left, whatever the program did after (a cursor cannot
// reach it). The output is replayed into an emulator of the same size
// that notes each line as it leaves the top; a scroll region or the
// alternate screen are not followed.
func (p *Term) History() string {
	p.mu.Lock()
	cols, rows := p.vt.Size()
	p.mu.Unlock()
	return Replay(keyboardProtocol.ReplaceAllString(p.Raw(), ""), cols, rows)
}

// Replay is History for out, written to a terminal of cols × rows as it
// receives it (a program's "\n" arrives as "\r\n" through a
// pseudo-terminal; out here is taken as it is).
func Replay(out string, cols, rows int) string {
	vt := vt10x.New(vt10x.WithSize(cols, rows))
	var gone []string
	var state byte
	for out != "" {
		seq, width, n, next := ansi.DecodeSequence(out, state, nil)
		state, out = next, out[n:]
		if cur := vt.Cursor(); cur.Y == rows-1 && vt.Mode()&vt10x.ModeAltScreen == 0 {
			lineFeed := seq == "\n" || seq == "\v" || seq == "\f" || seq == "\x1bD" || seq == "\x1bE"
			wraps := width > 0 && cur.State&cursorWrapNext != 0 && vt.Mode()&vt10x.ModeWrap != 0
			if lineFeed || wraps {
				gone = append(gone, row(vt, 0, cols))
			}
		}
		vt.Write([]byte(seq))
	}
	return strings.Join(append(gone, screen(vt)), "\n")
}

// Shown is text as a terminal of cols columns shows it, as History
// gives it: escapes left out, tabs moved over to the next stop of 8, a
// line wider than the terminal wrapped onto the next, trailing blanks
// removed. Its text is taken to be one cell a character (ASCII and the
// like).
func Shown(text string, cols int) string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(ansi.Strip(text), "\n"), "\n") {
		var b strings.Builder
		for i, seg := range strings.Split(l, "\t") {
			if i > 0 {
				b.WriteString(strings.Repeat(" ", 8-ansi.StringWidth(b.String())%8))
			}
			b.WriteString(seg)
		}
		r := []rune(b.String())
		for len(r) > cols {
			out = append(out, strings.TrimRight(string(r[:cols]), " "))
			r = r[cols:]
		}
		out = append(out, strings.TrimRight(string(r), " "))
	}
	return strings.Join(out, "\n")
}

// cursorWrapNext is vt10x's cursor state bit for "the next character
// goes on the next line": the cursor stands on the last column.
const cursorWrapNext = 2

func screen(vt vt10x.Terminal) string {
	cols, rows := vt.Size()
	lines := make([]string, 0, rows)
	for y := 0; y < rows; y++ {
		lines = append(lines, row(vt, y, cols))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// row is the text of row y, trailing blanks removed.
func row(vt vt10x.Terminal, y, cols int) string {
	var b strings.Builder
	for x := 0; x < cols; x++ {
		c := vt.Cell(x, y).Char
		if c == 0 {
			c = ' '
		}
		b.WriteRune(c)
	}
	return strings.TrimRight(b.String(), " ")
}

// WaitFor waits until the program has written want (escapes aside).
func (p *Term) WaitFor(t testing.TB, want string) {
	t.Helper()
	p.WaitForWithin(t, want, Timeout)
}

// WaitForWithin is WaitFor for a program that may take up to d: one
// that starts slowly, or waits on a model.
func (p *Term) WaitForWithin(t testing.TB, want string, d time.Duration) {
	t.Helper()
	waitUntil(t, d, func() bool { return strings.Contains(p.Output(), want) }, func() {
		t.Fatalf("timed out waiting for %q; the terminal shows:\n%s", want, p.Output())
	})
}

// WaitForScreen waits up to d until the screen shows want: for a
// program that draws by moving the cursor rather than by writing
// spaces, whose Output runs words together.
func (p *Term) WaitForScreen(t testing.TB, want string, d time.Duration) {
	t.Helper()
	waitUntil(t, d, func() bool { return strings.Contains(p.Screen(), want) }, func() {
		t.Fatalf("timed out waiting for %q on the screen, which shows:\n%s", want, p.Screen())
	})
}

// WaitOffScreen waits up to d until the screen no longer shows gone:
// for a menu or notice the program takes down once it has caught up
// with what was typed.
func (p *Term) WaitOffScreen(t testing.TB, gone string, d time.Duration) {
	t.Helper()
	waitUntil(t, d, func() bool { return !strings.Contains(p.Screen(), gone) }, func() {
		t.Fatalf("timed out waiting for %q to leave the screen, which shows:\n%s", gone, p.Screen())
	})
}

// WaitPrompt waits until the screen's last line is prompt alone: the
// program waits for input again. Keys sent before that may reach a
// terminal still in line mode (a reply being printed), where Enter is a
// newline.
func (p *Term) WaitPrompt(t testing.TB, prompt string) {
	t.Helper()
	waitUntil(t, Timeout, func() bool {
		lines := strings.Split(strings.TrimRight(p.Screen(), " \n"), "\n")
		return strings.TrimSpace(lines[len(lines)-1]) == prompt
	}, func() {
		t.Fatalf("no empty prompt %q; the terminal shows:\n%s", prompt, p.Screen())
	})
}

// waitUntil checks done every 20 ms until it holds, and calls fail (which
// ends the test) once d has passed without it: the one loop of every
// wait on what the terminal shows.
func waitUntil(t testing.TB, d time.Duration, done func() bool, fail func()) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !done() {
		if time.Now().After(deadline) {
			fail()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Leave waits for prompt alone on the last line, sends Ctrl+D there and
// fails unless the program then exits with status 0. On a loaded
// machine a key sent just as one prompt gives way to the next can be
// read by the prompt that is ending, whose reader cannot be cancelled
// (see cli/term's inputGate): a user then presses Ctrl+D again, and so
// does Leave, once, when the program is still there after a while.
func (p *Term) Leave(t testing.TB, prompt string) {
	t.Helper()
	p.WaitPrompt(t, prompt)
	p.Send("\x04")
	errc := make(chan error, 1)
	go func() { errc <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-errc:
	case <-time.After(Timeout / 3):
		t.Logf("no exit %v after Ctrl+D; pressing it again", Timeout/3)
		p.Send("\x04")
		select {
		case err = <-errc:
		case <-time.After(Timeout):
			t.Fatalf("the program did not exit; the terminal shows:\n%s", p.Output())
		}
	}
	<-p.done
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("exit %d:\n%s", ee.ExitCode(), p.Output())
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Wait waits for the program to exit and returns its exit code.
func (p *Term) Wait(t testing.TB) int {
	t.Helper()
	return p.WaitWithin(t, Timeout)
}

// WaitWithin is Wait for at most d: a program whose run takes longer
// than Timeout (an agent's turn with its model).
func (p *Term) WaitWithin(t testing.TB, d time.Duration) int {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- p.cmd.Wait() }()
	select {
	case err := <-errc:
		<-p.done
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(d):
		t.Fatalf("the program did not exit; the terminal shows:\n%s", p.Output())
		return -1
	}
}
