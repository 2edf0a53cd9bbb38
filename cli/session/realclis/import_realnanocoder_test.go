package realclis_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	nanocoderim "github.com/loomhq/loom/importer/nanocoder"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/termtest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealNanocoder: Nanocoder (`nanocoder run --no-plain` on a
// terminal, on Node 24; a provider of
// ~/.config/nanocoder/agents.config.json on the Chat Completions API of
// a fake model; no account) runs the plain and reading flows of
// runChatFlows. Nanocoder saves a session only from its terminal
// interface (its plain runtime, which it picks off a terminal, saves
// none), continues one only in its interactive mode (-c), and keeps no
// usage, no transcript of a sub-agent and no compaction of its own in a
// run, so those flows are not run.
func TestImportRealNanocoder(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.Nanocoder)
	a := newChatAgent(t, nanocoderim.Tool)
	clitest.WriteSettings(t, filepath.Join(a.fx.Home, ".config", "nanocoder", "agents.config.json"), `{"nanocoder": {"providers": [
		{"name": "fake", "baseUrl": "`+a.srv.BaseURL()+`", "apiKey": "sk-fake", "models": ["gpt-fake"]}]}}`)
	env := agentclitest.WithCommand(t, agentclitest.Node24, agentclitest.Env(a.fx.Home, "TERM=xterm"))
	a.run = func(t *testing.T, dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--provider", "fake", "--model", "gpt-fake", "--trust-directory", "--no-plain", "run"}, args...)...)
		cmd.Dir, cmd.Env = dir, env
		term := termtest.Start(t, cmd, 120, 40)
		if code := term.WaitWithin(t, clitest.CLITimeout); code != 0 {
			t.Fatalf("nanocoder exited %d:\n%s", code, term.Output())
		}
	}
	a.prompt = func(p string) []string { return []string{p} }
	a.more = nil
	a.tools = a.prompt
	a.read = func(path string) providertest.ToolCall {
		return providertest.ToolCall{Name: "read_file", Args: `{"path":"` + path + `"}`}
	}
	a.agent = nil
	a.noUsage = true
	runChatFlows(t, a)
}
