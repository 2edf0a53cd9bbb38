package term

import (
	"io"
	"os"
	"testing"
)

// pipeGate is a gate on a pipe, the pipe's end to write to, and what
// reads the gate once.
func pipeGate(t *testing.T, lineEnds bool) (*inputGate, *os.File, func() string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	g := &inputGate{f: r, lineEnds: lineEnds}
	return g, w, func() string {
		b := make([]byte, 8)
		n, err := g.Read(b)
		if err != nil {
			t.Fatal(err)
		}
		return string(b[:n])
	}
}

// The gate hands over nothing after an Enter until the input handled
// it, so that what follows stays for the next input; inside a paste an
// Enter holds nothing.
func TestInputGateHoldsAfterEnter(t *testing.T) {
	g, w, read := pipeGate(t, false)
	io.WriteString(w, "a\rb\x1b[200~x\ry\x1b[201~\r")
	if got := read() + read(); got != "a\r" {
		t.Fatalf("read %q", got)
	}
	if g.wake == nil {
		t.Fatal("no hold after Enter")
	}
	g.release()
	got := ""
	for g.wake == nil {
		got += read()
	}
	if got != "b\x1b[200~x\ry\x1b[201~\r" {
		t.Fatalf("read %q up to the Enter after the paste", got)
	}
	g.close()
	if n, err := g.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("after close: %d, %v", n, err)
	}
}

// Reading an answer, the gate holds after a line feed and after Esc
// pressed alone, which end it, but not after the escape byte of a key's
// sequence (an arrow), which arrives whole.
func TestInputGateHoldsAfterAnswerEnds(t *testing.T) {
	g, w, read := pipeGate(t, true)
	io.WriteString(w, "2\x1b[D\n")
	got := ""
	for g.wake == nil {
		got += read()
	}
	if got != "2\x1b[D\n" {
		t.Fatalf("read %q up to the line feed, want the arrow's sequence whole", got)
	}
	g.release()
	io.WriteString(w, "\x1b")
	if got := read(); got != "\x1b" || g.wake == nil {
		t.Fatalf("read %q; held: %v, want a hold after Esc alone", got, g.wake != nil)
	}
}
