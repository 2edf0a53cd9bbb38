package clitest

import (
	"strings"
	"testing"
)

// LoomIn runs the loom binary in dir.
func (fx *AgentFixture) LoomIn(t *testing.T, dir string, args ...string) Result {
	t.Helper()
	cmd := fx.Cmd(t, args...)
	cmd.Dir = dir
	r := ExecCmd(t, cmd, "")
	if r.Code != 0 {
		t.Fatalf("loom %s in %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), dir, r.Code, r.Stdout, r.Stderr)
	}
	return r
}
