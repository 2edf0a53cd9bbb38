package term

import (
	"io"
	"os"
	"testing"
)

// The gate hands over nothing after an Enter until the input handled
// it, so that what follows stays for the next input; inside a paste an
// Enter holds nothing.
func TestInputGateHoldsAfterEnter(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	io.WriteString(w, "a\rb\x1b[200~x\ry\x1b[201~\r")
	g := &inputGate{f: r}
	read := func() string {
		b := make([]byte, 8)
		n, err := g.Read(b)
		if err != nil {
			t.Fatal(err)
		}
		return string(b[:n])
	}
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
