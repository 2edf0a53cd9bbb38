package realclis_test

import (
	"path/filepath"
	"testing"

	codebuddyim "github.com/loomhq/loom/importer/codebuddy"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealCodeBuddy: CodeBuddy Code (`codebuddy -p`; a custom
// model of ~/.codebuddy/models.json on the Chat Completions API of a
// fake model, as Tencent's documentation of models.json lays out; no
// Tencent account) runs the flows of runChatFlows: a second turn with
// `-c`, a Read with reasoning and cached tokens, a sub-agent (its Agent
// tool in the foreground) and `/compact`, whose call CodeBuddy records.
func TestImportRealCodeBuddy(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.CodeBuddy)
	a := newChatAgent(t, codebuddyim.Tool)
	clitest.WriteSettings(t, filepath.Join(a.fx.Home, ".codebuddy", "models.json"), `{"models": [{"id": "gpt-fake", "name": "Fake",
		"vendor": "OpenAI", "apiKey": "sk-fake", "maxInputTokens": 200000, "maxOutputTokens": 8000,
		"url": "`+a.srv.BaseURL()+`/chat/completions", "supportsToolCall": true, "supportsReasoning": true}],
		"availableModels": ["gpt-fake"]}`)
	// Off by CodeBuddy's own switches, so that no run reaches for the
	// network or spends a turn on its own housekeeping: auto-memory's
	// extraction, hot reload ("for resource-limited environments") and
	// workflows, as its CHANGELOG gives them; the update check,
	// telemetry and the built-in plugin marketplace (cnb.cool,
	// www.codebuddy.ai), by the variables its code reads for them.
	env := agentclitest.Env(a.fx.Home, "CODEBUDDY_DISABLE_AUTO_MEMORY=1", "CODEBUDDY_DISABLE_HOT_RELOAD=1",
		"CODEBUDDY_DISABLE_WORKFLOWS=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CODEBUDDY_SKIP_BUILTIN_MARKETPLACE=1")
	a.run = func(t *testing.T, dir string, args ...string) {
		agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, append([]string{"--model", "gpt-fake"}, args...)...)
	}
	a.prompt = func(p string) []string { return []string{"-p", p} }
	a.more = func(p string) []string { return []string{"-c", "-p", p} }
	a.tools = func(p string) []string { return []string{"-y", "-p", p} }
	a.read = func(path string) providertest.ToolCall {
		return providertest.ToolCall{Name: "Read", Args: `{"file_path":"` + path + `"}`}
	}
	a.agent = func(task string) providertest.ToolCall {
		return providertest.ToolCall{Name: "Agent",
			Args: `{"description":"count lines","prompt":"` + task + `","subagent_type":"general-purpose","run_in_background":false}`}
	}
	a.compact, a.asks, a.compactUsage = "/compact", "detailed summary of the conversation so far", true
	runChatFlows(t, a)
}
