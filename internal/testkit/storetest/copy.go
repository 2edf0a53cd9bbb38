package storetest

import (
	"io"
	"os"
	"testing"
)

// CopyClosed copies the SQLite store file from, closed (so its log is in
// the main file), to to, as a user copies a store or restores a backup:
// a log or shared-memory file left beside to goes.
func CopyClosed(t testing.TB, from, to string) {
	t.Helper()
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(to + suffix)
		if _, err := os.Stat(from + suffix); err == nil {
			t.Fatalf("%s%s is there: the store is open", from, suffix)
		}
	}
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
