package recall

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// processStart is when this process started, as the kernel counts it
// (its start time in /proc/self/stat against the time since boot), so
// that a hook's budget includes what ran before main: the exec, the
// loading of the binary, the runtime's start. Where that cannot be
// read, the time of its first call.
func processStart() time.Time {
	now := time.Now()
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return now
	}
	// The fields after the command's name, which is in parentheses and
	// may hold anything: the start time is the 22nd field, the 20th
	// after the name.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return now
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return now
	}
	ticks, err := strconv.ParseInt(string(f[19]), 10, 64)
	if err != nil {
		return now
	}
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return now
	}
	// The kernel counts in USER_HZ, 100 a second on every Linux
	// architecture Go runs on.
	up := time.Duration(ts.Nano())
	started := time.Duration(ticks) * (time.Second / 100)
	if started > up || up-started > time.Hour {
		return now
	}
	return now.Add(-(up - started))
}
