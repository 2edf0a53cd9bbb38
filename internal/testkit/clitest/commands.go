package clitest

import (
	"testing"

	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// WaitFor waits up to 10 s for s to hold want (cmdtest.WaitFor).
func WaitFor(t *testing.T, s interface{ String() string }, want string) {
	t.Helper()
	cmdtest.WaitFor(t, s, want)
}
