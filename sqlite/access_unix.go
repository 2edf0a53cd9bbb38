//go:build unix

package sqlite

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// unwritable says why this process could not write the database at
// path, "" when it can. Writing needs the file, and (to create the -wal
// and -shm files beside it, unless they are there and writable) its
// directory. access(2) answers for this process's user, root included,
// and says EROFS on a read-only file system.
func unwritable(path string) string {
	switch err := unix.Access(path, unix.W_OK); {
	case errors.Is(err, fs.ErrNotExist):
		// To be created: the directory decides.
	case errors.Is(err, syscall.EROFS):
		return "the file system is read-only"
	case err != nil:
		return "the file is read-only"
	case writable(path+"-wal") && writable(path+"-shm"):
		return ""
	}
	switch err := unix.Access(filepath.Dir(path), unix.W_OK); {
	case errors.Is(err, syscall.EROFS):
		return "the file system is read-only"
	case err != nil:
		return "its directory " + filepath.Dir(path) + " is read-only"
	}
	return ""
}

func writable(path string) bool {
	if _, err := os.Stat(path); err != nil {
		return false
	}
	return unix.Access(path, unix.W_OK) == nil
}
