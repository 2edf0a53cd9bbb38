package realclis_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openclawim "github.com/loomhq/loom/importer/openclaw"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealOpenClaw: OpenClaw (`openclaw agent --local`, the
// embedded agent, on the Node 24 it needs; a provider of
// ~/.openclaw/openclaw.json on the Chat Completions API of a fake
// model) keeps its sessions only in its agent's openclaw-agent.sqlite:
// a prompt answered with reasoning and cached tokens, and a turn more
// on the same session key that reads a file with reasoning, import
// faithfully from the database, and a second import adds nothing. OpenClaw's compaction (`openclaw sessions compact`)
// and sub-agents (behind its tool search) are not run here.
func TestImportRealOpenClaw(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.OpenClaw)
	fx := clitest.NewEmptyFixture(t)
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	// OpenClaw sends its own context as a user message after the
	// prompt: the script looks at the last two.
	sc := &clitest.Script[openaitest.Reply]{Last: func(r providertest.Request) string {
		msgs, _ := r.Body["messages"].([]any)
		if len(msgs) > 2 {
			msgs = msgs[len(msgs)-2:]
		}
		b, _ := json.Marshal(msgs)
		return string(b)
	}}
	srv.Respond(sc.Respond)
	work := filepath.Join(fx.Home, "work")
	clitest.MustWrite(t, filepath.Join(work, "notes.txt"), "alpha\nbeta\n")
	clitest.MustWrite(t, filepath.Join(fx.Home, ".openclaw", "openclaw.json"), `{
  "agents": {"defaults": {"model": {"primary": "fake/gpt-fake"}, "workspace": "`+work+`", "skipBootstrap": true, "skills": []}},
  "plugins": {"enabled": false, "slots": {"memory": "none"}},
  "models": {"mode": "merge", "providers": {"fake": {"baseUrl": "`+srv.BaseURL()+`", "apiKey": "sk-fake", "api": "openai-completions",
    "models": [{"id": "gpt-fake", "name": "Fake", "reasoning": true, "input": ["text"], "contextWindow": 200000, "maxTokens": 8000}]}}}
}`)
	// What OpenClaw spends a turn preparing offline, turned off by its
	// own documented settings: above, its bundled plugins
	// (plugins.enabled), the memory plugin's indexing of the workspace
	// and sessions (plugins.slots.memory), the workspace's bootstrap
	// files and the skills catalogue; here, channels, cron and Bonjour
	// (docs/gateway/embedding.md, heartbeat.md, bonjour.md).
	env := agentclitest.WithCommand(t, agentclitest.Node24, agentclitest.Env(fx.Home,
		"OPENCLAW_SKIP_CHANNELS=1", "OPENCLAW_SKIP_CRON=1", "OPENCLAW_DISABLE_BONJOUR=1"))
	run := func(key, prompt string) {
		t.Helper()
		// An agent turn of OpenClaw takes half a minute to prepare on a
		// busy machine.
		agentclitest.Run(t, 6*time.Minute, work, env, bin, "agent", "--local", "--agent", "main", "--session-key", key, "--message", prompt)
	}
	usage := func(in, cached, out, reasoning int64) *openaitest.Usage {
		return &openaitest.Usage{PromptTokens: in, CachedTokens: cached, CompletionTokens: out, ReasoningTokens: reasoning}
	}
	started := time.Now()
	// Two runs (a turn of OpenClaw takes half a minute to prepare on a
	// busy machine): a prompt answered with reasoning and cached tokens,
	// then a read with reasoning on the same session key.
	read := providertest.ToolCall{ID: "call_read", Name: "read", Args: `{"path":"` + filepath.Join(work, "notes.txt") + `"}`}
	flow := &flowWant{flow: "a greeting, then a read", prompts: []string{"Say hello in one line.", "What is in notes.txt?"},
		replies: []string{"Hello there.", "It says alpha and beta."}, reasoning: []string{"A greeting.", "The user wants the file.", "Both lines are read."},
		tools: []toolWant{{read.Name, "beta"}}, usage: usageOf(800+1000+1400, 200+300, 15+40+9, 5+20+3), calls: 3}
	sc.On(flow.prompts[0], sc.Answer(openaitest.Reply{Reasoning: "A greeting.", Text: "Hello there.", Usage: usage(1000, 200, 15, 5)}))
	sc.On(flow.prompts[1], sc.Answer(openaitest.Reply{Reasoning: "The user wants the file.", Usage: usage(1300, 300, 40, 20), ToolCalls: []providertest.ToolCall{read}}))
	sc.On("beta", sc.Answer(openaitest.Reply{Reasoning: "Both lines are read.", Text: "It says alpha and beta.", Usage: usage(1400, 0, 9, 3)}))
	run("notes", flow.prompts[0])
	run("notes", flow.prompts[1])
	t.Logf("openclaw ran %d model calls in %s", len(srv.Requests()), time.Since(started).Round(time.Millisecond))

	keepAgentHome(fx)
	checkImportedFlows(t, fx, openclawim.Tool, []*flowWant{flow})
	checkFidelity(t, fx, openclawim.Tool, agentclitest.OpenAIAnswers(srv.Answered()), agentclitest.Expect{})
	rep := clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", openclawim.Tool, "--json"))
	if tr := clitest.ToolReport(t, rep, openclawim.Tool); tr.MessagesAdded != 0 || tr.SessionsNew != 0 || tr.SessionsGrown != 0 {
		t.Errorf("second import: %+v", tr)
	}
	listed := fx.MustExec(t, "session", "import", "--from", "list")
	if !strings.Contains(listed, "openclaw") {
		t.Errorf("--from list:\n%s", listed)
	}
}
