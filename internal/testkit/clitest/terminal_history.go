package clitest

import (
	"os/exec"
	"testing"

	"github.com/loomhq/loom/internal/testkit/termtest"
	"github.com/loomhq/loom/openai/openaitest"
)

// StartChatPTY runs loom with a fake model server on a cols×rows
// terminal.
func (fx *Fixture) StartChatPTY(t *testing.T, cols, rows int, args ...string) *termtest.Term {
	t.Helper()
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	cmd := exec.Command(LoomBinary(t), args...)
	cmd.Dir, cmd.Env = fx.Project, fx.BinEnv(append(ProviderEnv(srv), "TERM=xterm-256color")...)
	return termtest.Start(t, cmd, cols, rows)
}
