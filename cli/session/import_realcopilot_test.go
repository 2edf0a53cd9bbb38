package session_test

import (
	"testing"

	copilotim "github.com/loomhq/loom/importer/copilot"
	"github.com/loomhq/loom/internal/agentclitest"
	"github.com/loomhq/loom/internal/clitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealCopilot: GitHub Copilot CLI (`copilot -p`, one prompt a
// process), offline (COPILOT_OFFLINE) against a fake OpenAI-compatible
// model it reaches as a provider of the user's own
// (COPILOT_PROVIDER_BASE_URL, no login), runs the flows of
// runChatFlows: a second turn with `--continue`, a view of a file, a
// sub-agent with its task tool (sync), and `/compact`, whose model
// call's usage Copilot CLI records.
func TestImportRealCopilot(t *testing.T) {
	if clitest.OnPostgres() {
		t.Skip("runs the real agent once, on the SQLite pass")
	}
	t.Parallel()
	bin := agentclitest.Install(t, agentclitest.Copilot)
	a := newChatAgent(t, copilotim.Tool)
	env := agentclitest.Env(a.fx.Home, "COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false",
		"COPILOT_PROVIDER_BASE_URL="+a.srv.BaseURL(), "COPILOT_PROVIDER_API_KEY=sk-fake", "COPILOT_MODEL=gpt-fake")
	a.run = func(t *testing.T, dir string, args ...string) {
		agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, args...)
	}
	a.prompt = func(p string) []string { return []string{"-p", p} }
	a.more = func(p string) []string { return []string{"--continue", "-p", p} }
	a.tools = func(p string) []string { return []string{"--allow-all-tools", "-p", p} }
	a.read = func(path string) providertest.ToolCall {
		return providertest.ToolCall{Name: "view", Args: `{"path":"` + path + `"}`}
	}
	a.agent = func(task string) providertest.ToolCall {
		return providertest.ToolCall{Name: "task",
			Args: `{"name":"counter","prompt":"` + task + `","agent_type":"general-purpose","description":"count lines","mode":"sync"}`}
	}
	a.compact, a.asks, a.compactUsage = "/compact", "create a detailed summary of the conversation", true
	runChatFlows(t, a)
}
