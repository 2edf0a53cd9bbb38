package term

import (
	"bytes"
	"io"
	"os"
	"sync"
	"time"
)

// inputGate is the terminal's input as one ReadInput reads it: a byte at
// a time, and nothing more after a key that may end the input (Enter,
// Ctrl+C, Ctrl+D) until the input has handled that key. What is typed
// or pasted after the message that ends it stays with the terminal for
// the next ReadInput, instead of being read and lost with the program
// that ends.
type inputGate struct {
	f *os.File
	// lineEnds: a line feed (Ctrl+J) and Esc end the input too, as they
	// do an answer.
	lineEnds bool

	mu sync.Mutex
	// wake is closed when a held key was handled; nil when none is held.
	wake chan struct{}
	done bool
	// tail holds the last bytes read, to tell a paste, whose line breaks
	// end nothing.
	tail    []byte
	pasting bool
}

// holdTimeout lets input go on when a held byte never became a key
// (it was part of a sequence the input did not understand).
const holdTimeout = time.Second

var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

func (g *inputGate) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	g.mu.Lock()
	wake, done := g.wake, g.done
	g.mu.Unlock()
	if wake != nil {
		select {
		case <-wake:
		case <-time.After(holdTimeout):
		}
		g.mu.Lock()
		g.wake, done = nil, g.done
		g.mu.Unlock()
	}
	if done {
		return 0, io.EOF
	}
	n, err := g.f.Read(p[:1])
	if n == 1 && (g.ends(p[0]) || g.lineEnds && g.escape(p[0])) {
		g.mu.Lock()
		g.wake = make(chan struct{})
		g.mu.Unlock()
	}
	return n, err
}

// ends reports whether b may end the input: Enter, Ctrl+C or Ctrl+D
// outside a paste.
func (g *inputGate) ends(b byte) bool {
	g.tail = append(g.tail, b)
	if len(g.tail) > len(pasteStart) {
		g.tail = g.tail[len(g.tail)-len(pasteStart):]
	}
	switch {
	case bytes.Equal(g.tail, pasteStart):
		g.pasting = true
	case bytes.Equal(g.tail, pasteEnd):
		g.pasting = false
	}
	return !g.pasting && (b == '\r' || b == 0x03 || b == 0x04 || g.lineEnds && b == '\n')
}

// escape reports whether b is Esc pressed alone, which gives up an
// answer: an escape byte with nothing after it, where the escape
// sequence of another key (an arrow) arrives whole at once.
func (g *inputGate) escape(b byte) bool {
	return b == 0x1b && !g.pasting && !pending(int(g.f.Fd()), escapeWait)
}

// escapeWait is how long an escape byte waits for the rest of a
// sequence.
const escapeWait = 25 * time.Millisecond

// release lets reading go on after a held key that did not end the
// input.
func (g *inputGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.wake != nil {
		close(g.wake)
		g.wake = nil
	}
}

// close ends reading: the input is over.
func (g *inputGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.done = true
	if g.wake != nil {
		close(g.wake)
		g.wake = nil
	}
}

func (g *inputGate) Write(p []byte) (int, error) { return g.f.Write(p) }
func (g *inputGate) Close() error                { return nil }
func (g *inputGate) Fd() uintptr                 { return g.f.Fd() }
