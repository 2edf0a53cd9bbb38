package session_test

import (
	"path/filepath"
	"testing"

	qwenim "github.com/loomhq/loom/importer/qwen"
	"github.com/loomhq/loom/internal/agentclitest"
	"github.com/loomhq/loom/internal/clitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealQwen: Qwen Code (`qwen PROMPT`, one prompt a process; on
// the Node 22 it needs), against a fake OpenAI-compatible model
// (--auth-type openai), runs the flows of runChatFlows: a second turn
// with `-c`, a read_file, a sub-agent with its agent tool in the
// foreground, and `/compress`.
func TestImportRealQwen(t *testing.T) {
	if clitest.OnPostgres() {
		t.Skip("runs the real agent once, on the SQLite pass")
	}
	t.Parallel()
	bin := agentclitest.Install(t, agentclitest.Qwen)
	a := newChatAgent(t, qwenim.Tool)
	// No memory extraction after each turn (a model call of its own), no
	// usage statistics: nothing leaves 127.0.0.1.
	clitest.WriteSettings(t, filepath.Join(a.fx.Home, ".qwen", "settings.json"),
		`{"memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false}, "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}}`)
	env := agentclitest.WithNode(t, agentclitest.Env(a.fx.Home,
		"OPENAI_BASE_URL="+a.srv.BaseURL(), "OPENAI_API_KEY=sk-fake", "OPENAI_MODEL=gpt-fake",
		"QWEN_CODE_SUPPRESS_YOLO_WARNING=1"))
	a.run = func(t *testing.T, dir string, args ...string) {
		agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, append([]string{"--auth-type", "openai"}, args...)...)
	}
	a.prompt = func(p string) []string { return []string{p} }
	a.more = func(p string) []string { return []string{"-c", p} }
	a.tools = func(p string) []string { return []string{"--yolo", p} }
	a.read = func(path string) providertest.ToolCall {
		return providertest.ToolCall{Name: "read_file", Args: `{"file_path":"` + path + `"}`}
	}
	a.agent = func(task string) providertest.ToolCall {
		return providertest.ToolCall{Name: "agent",
			Args: `{"description":"count lines","prompt":"` + task + `","subagent_type":"general-purpose","run_in_background":false}`}
	}
	a.compact, a.asks = "/compress", "summarizes a conversation"
	runChatFlows(t, a)
}
