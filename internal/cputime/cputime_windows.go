//go:build windows

package cputime

import (
	"time"

	"golang.org/x/sys/windows"
)

// Used is the CPU time this process has used, user and system; 0 where
// it cannot be read.
func Used() time.Duration {
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user) != nil {
		return 0
	}
	// A Filetime counts 100-nanosecond intervals.
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100)
}
