// Package fsfault makes the disk refuse loom, for tests of what loom does
// then: a store whose file, directory or file system is read-only, or a
// file system that is full. Mounting needs root and a kernel that lets it
// mount a tmpfs; where either is missing the test is skipped with the
// reason, never failed.
package fsfault

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Nobody is the uid and gid of the user nobody, whom a test runs as when
// it is root and permissions must bind.
const Nobody = 65534

// ReadOnlyKinds are the ways MakeReadOnly can make a store unwritable.
var ReadOnlyKinds = []string{"file", "directory", "file system"}

// MakeReadOnly makes files (which are in dir) unwritable the way kind
// says: "file", the files mode 0444 in a directory anyone may write;
// "directory", dir mode 0555 (so nothing can be created beside them);
// "file system", dir a read-only file system. Root writes whatever the
// modes say, so for the first two it reports that the check must run as
// the user Nobody, and for "directory" gives Nobody the files.
func MakeReadOnly(t testing.TB, kind, dir string, files ...string) (asNobody bool) {
	t.Helper()
	root := os.Geteuid() == 0
	switch kind {
	case "file":
		for _, f := range files {
			must(t, os.Chmod(f, 0o444))
		}
		must(t, os.Chmod(dir, 0o777))
		return root
	case "directory":
		if root {
			for _, f := range files {
				must(t, os.Chown(f, Nobody, Nobody))
			}
		}
		must(t, os.Chmod(dir, 0o555))
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return root
	case "file system":
		ReadOnly(t, dir)
		return false
	}
	t.Fatalf("unknown kind of read-only store %q", kind)
	return false
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Tmpfs mounts an empty tmpfs of size bytes on dir (which must exist) for
// the rest of the test.
func Tmpfs(t testing.TB, dir string, size int64) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a file system needs root")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mounting a tmpfs is not permitted here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}

// ReadOnly makes dir a read-only file system holding what dir held: it
// mounts a tmpfs over it, copies the files back and remounts read-only.
func ReadOnly(t testing.TB, dir string) {
	t.Helper()
	keep := t.TempDir()
	copyTree(t, dir, keep)
	Tmpfs(t, dir, 64<<20)
	copyTree(t, keep, dir)
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Skipf("remounting read-only is not permitted here: %v %s", err, out)
	}
}

// copyTree copies what is in from into to, keeping modes and owners.
func copyTree(t testing.TB, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from+"/.", to).CombinedOutput(); err != nil {
		t.Fatalf("copy %s to %s: %v %s", from, to, err, out)
	}
}
