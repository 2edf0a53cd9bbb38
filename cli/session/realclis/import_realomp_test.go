package realclis_test

import (
	"path/filepath"
	"testing"

	ompim "github.com/loomhq/loom/importer/omp"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealOhMyPi: Oh My Pi (`omp -p`, on the Bun it needs; a
// custom provider of ~/.omp/agent/models.json on the Chat Completions
// API of a fake model) runs the flows of runChatFlows: a second turn
// with `--continue` and a read with reasoning. omp 18 writes a title entry before each file's
// session header; every file imports without a problem.
func TestImportRealOhMyPi(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.OhMyPi)
	a := newChatAgent(t, ompim.Tool)
	clitest.WriteSettings(t, filepath.Join(a.fx.Home, ".omp", "agent", "models.json"), `{"providers": {"fake": {
		"baseUrl": "`+a.srv.BaseURL()+`", "api": "openai-completions", "apiKey": "FAKE_OPENAI_KEY",
		"models": [{"id": "gpt-fake", "reasoning": true, "input": ["text"], "contextWindow": 200000, "maxTokens": 8000,
			"cost": {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 0}}]}}}`)
	env := agentclitest.WithCommand(t, agentclitest.Bun, agentclitest.Env(a.fx.Home, "FAKE_OPENAI_KEY=sk-fake", "PI_OFFLINE=1"))
	a.run = func(t *testing.T, dir string, args ...string) {
		agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, append([]string{"--provider", "fake", "--model", "gpt-fake"}, args...)...)
	}
	a.prompt = func(p string) []string { return []string{"-p", p} }
	a.more = func(p string) []string { return []string{"--continue", "-p", p} }
	a.tools = a.prompt
	a.read = func(path string) providertest.ToolCall {
		return providertest.ToolCall{Name: "read", Args: `{"i":"read the notes","path":"` + path + `"}`}
	}
	// omp runs a task's sub-agent in the background and hands its result
	// to a later turn, and its compaction (of --mode rpc) summarises with
	// a model it does not reach here: the flows of a sub-agent and a
	// compaction are left out. omp's sub-agent files and compactions are
	// pi's (TestRead in importer/omp, TestImportRealPiCompaction).
	a.agent = nil
	runChatFlows(t, a)
}
