package realclis_test

import (
	"path/filepath"
	"testing"

	commandcodeim "github.com/loomhq/loom/importer/commandcode"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealCommandCode: Command Code (`cmd -p --local-only`, on
// Node 24; a provider of ~/.commandcode/providers.json on the Chat
// Completions API of a fake model, and an API key in
// COMMAND_CODE_API_KEY that only its check for a login reads; no
// account) runs the flows of runChatFlows: a second turn with -c and a
// read with reasoning. Command Code keeps no transcript of a sub-agent
// (its result only) and, in -p, sends /compact to the model as a
// prompt, so those flows are not run; it records no reasoning tokens.
func TestImportRealCommandCode(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.CommandCode)
	a := newChatAgent(t, commandcodeim.Tool)
	clitest.WriteSettings(t, filepath.Join(a.fx.Home, ".commandcode", "providers.json"), `{"provider": {"fake": {
		"api": "openai-completions", "baseURL": "`+a.srv.BaseURL()+`", "apiKey": false,
		"models": {"gpt-fake": {"name": "Fake"}}}}}`)
	env := agentclitest.WithCommand(t, agentclitest.Node24,
		agentclitest.Env(a.fx.Home, "COMMAND_CODE_API_KEY=local-only", "CMD_LOCAL_ONLY=1"))
	a.run = func(t *testing.T, dir string, args ...string) {
		agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, append([]string{"--local-only", "--model", "fake/gpt-fake"}, args...)...)
	}
	a.prompt = func(p string) []string { return []string{"-p", p} }
	a.more = func(p string) []string { return []string{"-c", "-p", p} }
	a.tools = func(p string) []string { return []string{"--yolo", "-p", p} }
	a.read = func(path string) providertest.ToolCall {
		return providertest.ToolCall{Name: "read_file", Args: `{"file_path":"` + path + `"}`}
	}
	a.agent = nil
	a.noReasoningTokens = true
	runChatFlows(t, a)
}
