//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package term

import "golang.org/x/sys/unix"

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
