package fsfault

import (
	"io"
	"os"
	"testing"
)

// SharedDir makes a directory outside the test's own temporary one
// (which the user Nobody could not reach) with the given mode, so that
// another user may enter it (0o755) or also write in it (0o777); it is
// removed, whatever its mode then, when the test ends.
func SharedDir(t testing.TB, prefix string, mode os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Chmod(dir, 0o755)
		os.RemoveAll(dir)
	})
	must(t, os.Chmod(dir, mode))
	return dir
}

// CopyFile copies the file from to a new file to, made with mode perm
// (before the umask).
func CopyFile(t testing.TB, from, to string, perm os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, perm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	must(t, out.Close())
}
