package realclis_test

import (
	"path/filepath"
	"testing"

	qwenim "github.com/loomhq/loom/importer/qwen"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealQwen: Qwen Code (`qwen PROMPT`, one prompt a process; on
// the Node 22 it needs), against a fake OpenAI-compatible model
// (--auth-type openai), runs the flows of runChatFlows: a second turn
// with `-c`, a read_file, a sub-agent with its agent tool in the
// foreground, and `/compress`; and a sub-agent whose reply is text and
// a call, which Qwen Code records as two records of one model call.
func TestImportRealQwen(t *testing.T) {
	clitest.RealAgentsOnce(t)
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
	a.extra = func(t *testing.T) []*flowWant {
		// A sub-agent's reply of text and a call: Qwen Code records them
		// as two assistant records of one model call.
		dir := filepath.Join(a.fx.Home, "crew")
		clitest.MustWrite(t, filepath.Join(dir, "notes.txt"), "alpha\nbeta\n")
		usage := func(in, out int64) *openaitest.Usage {
			return &openaitest.Usage{PromptTokens: in, CompletionTokens: out}
		}
		task := "SUBTASK-READ: read notes.txt"
		read := a.read(filepath.Join(dir, "notes.txt"))
		sub := &flowWant{flow: "sub-agent's reading", prompts: []string{task}, replies: []string{"Reading it.", "It says alpha and beta."},
			tools: []toolWant{{read.Name, "beta"}}, usage: usageOf(700+800, 0, 9+6, 0), calls: 2}
		call := a.agent(task)
		crew := &flowWant{flow: "sub-agent that reads", prompts: []string{"Have a helper read notes.txt."},
			replies: []string{"The helper read it."}, tools: []toolWant{{call.Name, "alpha and beta"}}, sub: sub,
			usage: usageOf(1500+1600, 0, 20+8, 0), calls: 2}
		a.sc.On(crew.prompts[0], a.sc.Answer(openaitest.Reply{Usage: usage(1500, 20), ToolCalls: []providertest.ToolCall{call}}))
		a.sc.On("SUBTASK-READ", a.sc.Answer(openaitest.Reply{Text: "Reading it.", Usage: usage(700, 9), ToolCalls: []providertest.ToolCall{read}}))
		a.sc.On("beta", a.sc.Answer(openaitest.Reply{Text: "It says alpha and beta.", Usage: usage(800, 6)}))
		a.sc.On("It says alpha and beta.", a.sc.Answer(openaitest.Reply{Text: "The helper read it.", Usage: usage(1600, 8)}))
		a.run(t, dir, a.tools(crew.prompts[0])...)
		return []*flowWant{crew}
	}
	// The usage of /compress's call is only in a telemetry record.
	a.fidelity.NotRecorded = map[string]func(providertest.Request) bool{"Qwen Code's compression call": asks(a.asks)}
	runChatFlows(t, a)
}
