//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package term

func quietInterrupt(int) func() { return func() {} }

func holdTypeAhead(int) func() { return func() {} }
