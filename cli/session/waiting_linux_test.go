package session_test

import (
	"os"

	"golang.org/x/sys/unix"
)

// bytesWaiting is how many bytes written to the pipe f are not read yet.
func bytesWaiting(f *os.File) (int, error) {
	return unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ) // FIONREAD
}
