package recall

import (
	"testing"
	"time"
)

// A hook's budget counts from its process's start where the process
// started for it, and from the command's own start in a process that
// started long before (a test binary, a program embedding loom's
// commands): there a budget of a minute must not be spent already.
func TestHookBudgetCountsFromTheCommand(t *testing.T) {
	built := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)
	fresh := built.Add(-80 * time.Millisecond)
	if got := commandStart(func() time.Time { return fresh }, built)(); !got.Equal(fresh) {
		t.Errorf("a process started %v before its command: start %v, want the process's %v", built.Sub(fresh), got, fresh)
	}
	old := built.Add(-5 * time.Minute)
	if got := commandStart(func() time.Time { return old }, built)(); !got.Equal(built) {
		t.Errorf("a process started %v before its command: start %v, want the command's %v", built.Sub(old), got, built)
	}
}
