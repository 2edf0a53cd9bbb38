package safefile_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/safefile"
	"github.com/loomhq/loom/internal/testkit/fsfault"
)

// Open refuses a named pipe at once, where open(2) of a FIFO without a
// writer would block, and a file over the limit before reading it.
func TestOpenRefusesWhatIsNoFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	fsfault.Fifo(t, fifo)
	if _, _, err := safefile.Open(fifo, 0); !errors.Is(err, safefile.ErrNotRegular) || !strings.Contains(err.Error(), "a named pipe") {
		t.Errorf("a FIFO: %v", err)
	}
	if _, _, err := safefile.Open(dir, 0); !errors.Is(err, safefile.ErrNotRegular) || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("a directory: %v", err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 3<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := safefile.Open(big, 2<<10); !errors.Is(err, safefile.ErrTooLarge) || !strings.Contains(err.Error(), "3 KB, over the limit of 2 KB") {
		t.Errorf("over the limit: %v", err)
	}
	f, fi, err := safefile.Open(big, 0)
	if err != nil || fi.Size() != 3<<10 {
		t.Fatalf("a regular file: %v", err)
	}
	f.Close()
}

// Reader stops at its limit (a stream that ends exactly there is
// whole) and when its context ends.
func TestReaderBounds(t *testing.T) {
	if b, err := io.ReadAll(safefile.NewReader(t.Context(), strings.NewReader("12345"), 5)); err != nil || string(b) != "12345" {
		t.Errorf("at the limit: %q, %v", b, err)
	}
	if _, err := io.ReadAll(safefile.NewReader(t.Context(), strings.NewReader("123456"), 5)); !errors.Is(err, safefile.ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := io.ReadAll(safefile.NewReader(ctx, strings.NewReader("x"), 0)); !errors.Is(err, context.Canceled) {
		t.Errorf("after the context ended: %v", err)
	}
}

// WriteFile replaces a file whole with the mode asked for and leaves
// nothing beside it; where it cannot write, the old file stays.
func TestWriteFileWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prices.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := safefile.WriteFile(path, []byte("new contents"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(b) != "new contents" || fi.Mode().Perm() != 0o600 {
		t.Errorf("%q %v", b, fi.Mode())
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("left beside it: %v", es)
	}
	if err := safefile.WriteFile(filepath.Join(dir, "missing", "x"), []byte("y"), 0o600); err == nil {
		t.Error("wrote into a missing directory")
	}
	if os.Getuid() != 0 {
		os.Chmod(dir, 0o500)
		defer os.Chmod(dir, 0o700)
		if err := safefile.WriteFile(path, []byte("lost"), 0o600); err == nil {
			t.Error("wrote into a read-only directory")
		}
		if b, _ := os.ReadFile(path); string(b) != "new contents" {
			t.Errorf("a failed write changed the file: %q", b)
		}
	}
}

// Stdin reads a redirected file or a pipe, and refuses a device.
func TestStdin(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := safefile.Stdin(r, 0); err != nil {
		t.Errorf("a pipe: %v", err)
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if err := safefile.Stdin(null, 0); !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("a device: %v", err)
	}
	if err := safefile.Stdin(nil, 0); err != nil {
		t.Errorf("nil: %v", err)
	}
}
