// Package mounttest mounts file systems for tests of what loom does when
// the disk refuses it: a read-only file system, or one that is full. It
// needs root and a kernel that lets it mount a tmpfs; where either is
// missing the test is skipped with the reason, never failed.
package mounttest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

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
