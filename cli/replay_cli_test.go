package cli_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// loom replay prints the session a title names, and --speed 0 makes it
// wait for nothing.
func TestReplay(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	if out := fx.MustRun(t, "replay", "Fix the flaky test", "--speed", "0"); !strings.Contains(out, "You're welcome") {
		t.Fatalf("replay:\n%s", out)
	}
}
