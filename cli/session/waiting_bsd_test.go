//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package session_test

import (
	"os"

	"golang.org/x/sys/unix"
)

// fionread is FIONREAD of <sys/filio.h>, _IOR('f', 127, int), the same
// on macOS and the BSDs (x/sys/unix does not name it there).
const fionread = 0x4004667f

// bytesWaiting is how many bytes written to the pipe f are not read yet.
func bytesWaiting(f *os.File) (int, error) {
	return unix.IoctlGetInt(int(f.Fd()), fionread)
}
