package clitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
)

// HookedClaude is the real Claude Code with settings whose hooks run
// loom on the store of an empty fixture, talking to a fake Anthropic
// server.
type HookedClaude struct {
	Fx  *Fixture
	Srv *anthropictest.Server
	// Bin is the installed claude; Dir is the working directory it runs
	// in, with Env.
	Bin, Dir string
	Env      []string
}

// NewHookedClaude installs the real Claude Code with hooks that run loom
// (event → loom's arguments) on a new empty fixture's store, talking to
// a new fake server closed when the test ends; extraEnv comes after its
// environment.
func NewHookedClaude(t *testing.T, hooks map[string]string, extraEnv ...string) *HookedClaude {
	t.Helper()
	c := &HookedClaude{Fx: NewEmptyFixture(t), Srv: anthropictest.NewServer()}
	t.Cleanup(c.Srv.Close)
	c.Bin = agentclitest.Install(t, agentclitest.ClaudeCode)
	home := t.TempDir()
	set := map[string]any{}
	for event, args := range hooks {
		set[event] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": LoomBinary(t) + " " + args}}}}
	}
	settings, _ := json.Marshal(map[string]any{"hooks": set})
	WriteSettings(t, filepath.Join(home, ".claude", "settings.json"), string(settings))
	c.Env = agentclitest.Env(home, append([]string{"ANTHROPIC_BASE_URL=" + c.Srv.BaseURL(), "ANTHROPIC_API_KEY=sk-ant-fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"LOOM_HOME=" + c.Fx.Home}, extraEnv...)...)
	if OnPostgres() {
		c.Env = append(c.Env, "LOOM_DB="+c.Fx.DB)
	}
	c.Dir = filepath.Join(home, "work")
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return c
}

// Ask runs one turn of claude -p on prompt in Dir, with flags before
// it (--continue), and returns what it printed, trimmed; a turn that
// prints nothing fails t.
func (c *HookedClaude) Ask(t *testing.T, prompt string, flags ...string) string {
	t.Helper()
	args := slices.Concat(flags, []string{"-p", "--model", "claude-sonnet-4-5", prompt})
	reply := strings.TrimSpace(agentclitest.Run(t, CLITimeout, c.Dir, c.Env, c.Bin, args...))
	if reply == "" {
		t.Fatalf("claude printed no reply to %q", prompt)
	}
	return reply
}
