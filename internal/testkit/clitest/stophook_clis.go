package clitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
)

// ClaudeWithHooks installs the real Claude Code with settings whose
// hooks run loom (event → loom's arguments) on fx's store, talking to
// srv, and returns it, a working directory and its environment.
func ClaudeWithHooks(t *testing.T, fx *Fixture, srv *anthropictest.Server, hooks map[string]string, extraEnv ...string) (bin, dir string, env []string) {
	t.Helper()
	bin = agentclitest.Install(t, agentclitest.ClaudeCode)
	home := t.TempDir()
	set := map[string]any{}
	for event, args := range hooks {
		set[event] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": LoomBinary(t) + " " + args}}}}
	}
	settings, _ := json.Marshal(map[string]any{"hooks": set})
	WriteSettings(t, filepath.Join(home, ".claude", "settings.json"), string(settings))
	env = agentclitest.Env(home, append([]string{"ANTHROPIC_BASE_URL=" + srv.BaseURL(), "ANTHROPIC_API_KEY=sk-ant-fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"LOOM_HOME=" + fx.Home}, extraEnv...)...)
	if OnPostgres() {
		env = append(env, "LOOM_DB="+fx.DB)
	}
	dir = filepath.Join(home, "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, dir, env
}
