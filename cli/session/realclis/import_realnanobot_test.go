package realclis_test

import (
	"path/filepath"
	"testing"
	"time"

	nanobotim "github.com/loomhq/loom/importer/nanobot"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealNanobot: nanobot's TypeScript port (`nanobot agent -m`,
// on the machine's Node; the fake model's Chat Completions API at
// $LLM_API_BASE; no account) runs the plain and reading flows of
// runChatFlows, each flow's directory naming its session
// (`--session cli:<directory>`: nanobot keys its sessions so, not by
// folder). nanobot keeps no usage, no reasoning and no sub-agent of its
// own in a session, so those are not checked or run.
func TestImportRealNanobot(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.Nanobot)
	a := newChatAgent(t, nanobotim.Tool)
	env := agentclitest.Env(a.fx.Home, "LLM_API_KEY=sk-fake", "LLM_API_BASE="+a.srv.BaseURL(), "LLM_MODEL=gpt-fake")
	a.run = func(t *testing.T, dir string, args ...string) {
		t.Helper()
		agentclitest.Run(t, 2*time.Minute, dir, env, bin, append([]string{"agent", "--session", "cli:" + filepath.Base(dir)}, args...)...)
	}
	a.prompt = func(p string) []string { return []string{"-m", p} }
	a.more = a.prompt
	a.tools = a.prompt
	a.read = func(path string) providertest.ToolCall {
		return providertest.ToolCall{Name: "read_file", Args: `{"path":"` + path + `"}`}
	}
	a.agent = nil
	a.noUsage, a.noReasoning = true, true
	runChatFlows(t, a)
}
