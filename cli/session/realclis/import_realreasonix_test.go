package realclis_test

import (
	"path/filepath"
	"testing"

	reasonixim "github.com/loomhq/loom/importer/reasonix"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealReasonix: Reasonix (`reasonix -p`, its native build as
// npm ships it; a provider of ~/.reasonix/config.toml on the Chat
// Completions API of a fake model) runs the flows of runChatFlows: a
// second turn with -c and a read with reasoning; and a compaction, its
// compress tool called by the model, whose summary Reasonix asks the
// model for. Reasonix records no usage in its sessions; its sub-agents
// are not run here.
func TestImportRealReasonix(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.Reasonix)
	a := newChatAgent(t, reasonixim.Tool)
	clitest.MustWrite(t, filepath.Join(a.fx.Home, ".reasonix", "config.toml"), `[[providers]]
name = "fake"
kind = "openai"
base_url = "`+a.srv.BaseURL()+`"
models = ["gpt-fake"]
default = "gpt-fake"
api_key_env = "FAKE_API_KEY"
`)
	env := agentclitest.Env(a.fx.Home, "FAKE_API_KEY=sk-fake")
	a.run = func(t *testing.T, dir string, args ...string) {
		agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, append([]string{"--model", "fake/gpt-fake"}, args...)...)
	}
	a.prompt = func(p string) []string { return []string{"-p", p} }
	a.more = func(p string) []string { return []string{"-p", "-c", p} }
	a.tools = a.prompt
	a.read = func(path string) providertest.ToolCall {
		return providertest.ToolCall{Name: "read_file", Args: `{"path":"` + path + `"}`}
	}
	a.agent = nil
	a.noUsage = true
	a.asks = "Compact the preceding conversation prefix"
	a.extra = func(t *testing.T) []*flowWant {
		dir := filepath.Join(a.fx.Home, "squash")
		clitest.MustWrite(t, filepath.Join(dir, "notes.txt"), "gamma\n")
		compress := providertest.ToolCall{Name: "compress", Args: `{"anchor":"Remember the word cobalt.","direction":"after"}`}
		w := &flowWant{flow: "compaction", prompts: []string{"Remember the word cobalt.", "Compress the conversation now.", "After the compaction?"},
			replies: []string{"Noted cobalt.", "Compressed.", "Still here after the summary."}, summaries: 1,
			tools: []toolWant{{compress.Name, "summarized"}}}
		u := &openaitest.Usage{PromptTokens: 900, CompletionTokens: 9}
		a.sc.On(w.prompts[0], a.sc.Answer(openaitest.Reply{Text: w.replies[0], Usage: u}))
		a.sc.On(w.prompts[1], a.sc.Answer(openaitest.Reply{ToolCalls: []providertest.ToolCall{compress}, Usage: u}))
		a.sc.On(a.asks, a.sc.Answer(openaitest.Reply{Text: "One word, cobalt, was remembered.", Usage: u}))
		a.sc.On("summarized", a.sc.Answer(openaitest.Reply{Text: w.replies[1], Usage: u}))
		a.sc.On(w.prompts[2], a.sc.Answer(openaitest.Reply{Text: w.replies[2], Usage: u}))
		for i, p := range w.prompts {
			if i == 0 {
				a.run(t, dir, a.prompt(p)...)
			} else {
				a.run(t, dir, a.more(p)...)
			}
		}
		return []*flowWant{w}
	}
	runChatFlows(t, a)
}
