package clitest

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/termtest"
)

// MainTurns are the fixture's main session's turns as a command that
// asks for a turn lists them.
var MainTurns = []string{"1  Why does TestRetry flake?", "2  Use a fake clock then.", "3  thanks"}

// StartTurnQuestion runs loom with args on a terminal, waits for it to
// ask question, and fails the test unless it listed MainTurns first.
func (fx *Fixture) StartTurnQuestion(t *testing.T, question string, args ...string) *termtest.Term {
	t.Helper()
	p := fx.StartPTY(t, args...)
	p.WaitFor(t, question)
	for _, want := range MainTurns {
		if !strings.Contains(p.Output(), want) {
			t.Fatalf("turn list lacks %q:\n%s", want, p.Output())
		}
	}
	return p
}
