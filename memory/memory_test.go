package memory_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/memory"
)

// A memory file that does not exist reads as empty; appends create it
// and its directory, private to the user, and add whole lines.
func TestAppendAndRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "MEMORY.md")
	if s, err := memory.Read(path); err != nil || s != "" {
		t.Fatalf("missing file: %q, %v", s, err)
	}
	for _, text := range []string{"  The API is versioned by header.  ", "Tests run with -race.\nAlways."} {
		if err := memory.Append(path, text); err != nil {
			t.Fatal(err)
		}
	}
	s, err := memory.Read(path)
	if err != nil || s != "The API is versioned by header.\nTests run with -race.\nAlways.\n" {
		t.Errorf("read %q, %v", s, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
}

// Empty and oversized appends are refused as invalid, and nothing is
// written.
func TestAppendRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "USER.md")
	for _, text := range []string{"", "  \n\t", strings.Repeat("x", memory.MaxAppend+1)} {
		if err := memory.Append(path, text); loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("append of %d bytes: %v", len(text), err)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a refused append wrote the file: %v", err)
	}
	if _, err := memory.Read(t.TempDir()); err == nil {
		t.Error("reading a directory as a memory file did not fail")
	}
}
