//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package term

import (
	"time"

	"golang.org/x/sys/unix"
)

func quietInterrupt(fd int) func() {
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil || old.Lflag&unix.ECHOCTL == 0 {
		return func() {}
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHOCTL
	if unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet) != nil {
		return func() {}
	}
	return func() { unix.IoctlSetTermios(fd, ioctlSetTermios, old) }
}

func holdTypeAhead(fd int) func() {
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return func() {}
	}
	hold := *old
	// Not echoed, not edited as a line, Enter kept as the carriage
	// return a key press is (ICRNL would make it a line feed, which the
	// message input reads as a new line rather than as sending).
	hold.Lflag &^= unix.ECHO | unix.ICANON | unix.ECHOCTL
	hold.Iflag &^= unix.ICRNL
	hold.Cc[unix.VMIN], hold.Cc[unix.VTIME] = 1, 0
	if unix.IoctlSetTermios(fd, ioctlSetTermios, &hold) != nil {
		return func() {}
	}
	return func() { unix.IoctlSetTermios(fd, ioctlSetTermios, old) }
}

// pending reports whether the terminal on fd has input waiting, or gets
// some within d.
func pending(fd int, d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int(d/time.Millisecond))
	return err == nil && n > 0 && fds[0].Revents&unix.POLLIN != 0
}
