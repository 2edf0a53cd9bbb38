package realclis_test

import (
	"path/filepath"
	"strings"
	"testing"

	grokim "github.com/loomhq/loom/importer/grok"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// grokSide are Grok Build's own side calls, by a piece of their
// request: the session's title (at the first prompt, and again later),
// and the one-line summary of each turn for its dashboard. Grok keeps
// no usage of them.
var grokSide = map[string]string{
	"Grok Build's title calls":          "generating the session title",
	"Grok Build's title-refresh calls":  "Generate a session title for the conversation above",
	"Grok Build's dashboard-line calls": "ultra-short dashboard line",
}

// TestImportRealGrok: Grok Build (`grok -p`, a custom model of
// ~/.grok/config.toml on the Chat Completions API of a fake model, as
// its documentation's "Custom Models" lays out; no xAI account) runs
// the flows of runChatFlows: a second turn with `-c`, a read_file with
// reasoning and cached tokens, a sub-agent (spawn_subagent in the
// foreground, a session of its own), and `/compact`. Each imports with
// the prompts as typed (not Grok's context lines or its <user_query>
// tags), each turn's calls and tokens, the sub-agent's counted once and
// linked, and the history before the compaction kept.
func TestImportRealGrok(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.Grok)
	a := newChatAgent(t, grokim.Tool)
	a.srv.Respond(func(r providertest.Request) (openaitest.Reply, bool) {
		for _, piece := range grokSide {
			if strings.Contains(string(r.Raw), piece) {
				return openaitest.Reply{Text: "A side answer.", Usage: &openaitest.Usage{PromptTokens: 50, CompletionTokens: 3}}, true
			}
		}
		return a.sc.Respond(r)
	})
	clitest.MustWrite(t, filepath.Join(a.fx.Home, ".grok", "config.toml"), `[models]
default = "fake"

[model.fake]
model = "gpt-fake"
base_url = "`+a.srv.BaseURL()+`"
name = "Fake"
api_key = "sk-fake"
context_window = 128000

[features]
telemetry = false
`)
	env := agentclitest.Env(a.fx.Home)
	a.run = func(t *testing.T, dir string, args ...string) {
		agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, args...)
	}
	a.prompt = func(p string) []string { return []string{"-p", p} }
	a.more = func(p string) []string { return []string{"-c", "-p", p} }
	a.tools = func(p string) []string { return []string{"--always-approve", "-p", p} }
	a.read = func(path string) providertest.ToolCall {
		return providertest.ToolCall{Name: "read_file", Args: `{"target_file":"` + path + `"}`}
	}
	a.agent = func(task string) providertest.ToolCall {
		return providertest.ToolCall{Name: "spawn_subagent",
			Args: `{"description":"count lines","prompt":"` + task + `","subagent_type":"general-purpose","background":false}`}
	}
	// Grok refuses a summary much shorter than what it summarises.
	a.compact, a.asks = "/compact", "faithful, concise summary of the conversation so far"
	a.summary = "<summary>" + strings.Repeat("The user had a helper count the lines of notes.txt; it counted two. ", 12) + "</summary>"
	a.fidelity.NotRecorded = map[string]func(providertest.Request) bool{"Grok Build's compaction call": asks(a.asks)}
	for name, piece := range grokSide {
		a.fidelity.NotRecorded[name] = func(r providertest.Request) bool { return strings.Contains(string(r.Raw), piece) }
	}
	runChatFlows(t, a)
}
