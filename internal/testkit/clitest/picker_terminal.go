package clitest

import (
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/termtest"
)

// WaitScreen waits until the terminal shows every one of want at once.
func WaitScreen(t *testing.T, p *termtest.Term, want ...string) {
	t.Helper()
	deadline := time.Now().Add(termtest.Timeout)
	for {
		s := p.Screen()
		missing := ""
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q on the screen; it shows:\n%s", missing, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
