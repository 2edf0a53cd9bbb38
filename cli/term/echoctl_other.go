//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package term

import "time"

func quietInterrupt(int) func() { return func() {} }

func holdTypeAhead(int) func() { return func() {} }

func pending(int, time.Duration) bool { return false }
