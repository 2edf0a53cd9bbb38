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
