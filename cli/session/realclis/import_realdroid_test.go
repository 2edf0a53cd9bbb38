package realclis_test

import (
	"path/filepath"
	"testing"
	"time"

	droidim "github.com/loomhq/loom/importer/droid"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealDroid: Factory's droid (`droid exec`, offline against a
// fake OpenAI Chat Completions server, a custom model of
// ~/.factory/settings.json) writes a prompt answered with reasoning,
// a file read, and a compaction (a call over the settings'
// compactionTokenLimit) in the middle of a turn; each imports
// faithfully with the token totals droid recorded, the compaction a
// summary, a second import adds nothing, and `--watch` imports a
// session a later `droid exec` writes. droid resumes a session only
// through Factory's service (`droid exec -s ID` fails offline), so no
// session here grows by a turn of its own.
func TestImportRealDroid(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.Droid)
	fx := clitest.NewEmptyFixture(t)
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	sc := &clitest.Script[openaitest.Reply]{Last: func(r providertest.Request) string { return clitest.LastJSON(r, "messages") }}
	srv.Respond(sc.Respond)
	clitest.MustWrite(t, filepath.Join(fx.Home, ".factory", "settings.json"), `{"customModels": [{"model": "gpt-fake", "displayName": "Fake",
		"baseUrl": "`+srv.BaseURL()+`", "apiKey": "sk-fake", "provider": "generic-chat-completion-api", "maxOutputTokens": 8000}],
		"sessionDefaultSettings": {"model": "custom:gpt-fake"}, "compactionTokenLimit": 5000}`)
	env := agentclitest.Env(fx.Home)
	dir := filepath.Join(fx.Home, "work")
	clitest.MustWrite(t, filepath.Join(dir, "notes.txt"), "alpha\nbeta\n")
	droid := func(prompt string) string {
		return agentclitest.Run(t, 3*time.Minute, dir, env, bin, "exec", prompt)
	}
	usage := func(in, cached, out int64) *openaitest.Usage {
		return &openaitest.Usage{PromptTokens: in, CachedTokens: cached, CompletionTokens: out}
	}

	plain := &flowWant{flow: "plain", prompts: []string{"Say hello in one line."}, replies: []string{"Hello there."},
		reasoning: []string{"A greeting."}, usage: usageOf(800, 200, 15, 0)}
	sc.On(plain.prompts[0], sc.Answer(openaitest.Reply{Reasoning: "A greeting.", Text: "Hello there.", Usage: usage(1000, 200, 15)}))
	droid(plain.prompts[0])

	tools := &flowWant{flow: "tools and reasoning", prompts: []string{"What is in notes.txt?"}, replies: []string{"It says alpha and beta."},
		reasoning: []string{"The user wants the file."}, tools: []toolWant{{"Read", "beta"}}, usage: usageOf(1300+1400, 0, 40+9, 0)}
	sc.On(tools.prompts[0], sc.Answer(openaitest.Reply{Reasoning: "The user wants the file.", Usage: usage(1300, 0, 40),
		ToolCalls: []providertest.ToolCall{{ID: "call_read", Name: "Read", Args: `{"file_path":"` + filepath.Join(dir, "notes.txt") + `"}`}}}))
	sc.On("beta", sc.Answer(openaitest.Reply{Text: "It says alpha and beta.", Usage: usage(1400, 0, 9)}))
	droid(tools.prompts[0])

	// A call that reports more tokens than compactionTokenLimit: droid
	// compacts the history (a model call for the summary, kept in a
	// compaction_state line) before it sends the call's result.
	compact := &flowWant{flow: "compaction", prompts: []string{"Big turn."}, replies: []string{"Reading it first.", "Done after the summary."},
		tools: []toolWant{{"Read", "beta"}}, summaries: 1, usage: usageOf(6000+1900+2000, 0, 10+30+6, 0)}
	sc.On(compact.prompts[0], sc.Answer(openaitest.Reply{Text: "Reading it first.", Usage: usage(6000, 0, 10),
		ToolCalls: []providertest.ToolCall{{ID: "call_big", Name: "Read", Args: `{"file_path":"` + filepath.Join(dir, "notes.txt") + `"}`}}}))
	sc.On("Please summarize the following conversation", sc.Answer(openaitest.Reply{Text: "<summary>A big turn read notes.txt.</summary>", Usage: usage(1900, 0, 30)}))
	sc.On("call_big", sc.Answer(openaitest.Reply{Text: "Done after the summary.", Usage: usage(2000, 0, 6)}))
	droid(compact.prompts[0])

	keepAgentHome(fx)
	checkImportedFlows(t, fx, droidim.Tool, []*flowWant{plain, tools, compact})
	checkFidelity(t, fx, droidim.Tool, agentclitest.OpenAIAnswers(srv.Answered()),
		agentclitest.Expect{Summary: asks("Please summarize the following conversation")})
	rep := clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", droidim.Tool, "--json"))
	if tr := clitest.ToolReport(t, rep, droidim.Tool); tr.MessagesAdded != 0 || tr.SessionsNew != 0 || tr.SessionsGrown != 0 {
		t.Errorf("second import: %+v", tr)
	}

	sc.On("A prompt while watched?", sc.Answer(openaitest.Reply{Text: "Watched and answered.", Usage: usage(900, 0, 3)}))
	checkWatched(t, fx, droidim.Tool, func() { droid("A prompt while watched?") }, "Watched and answered")
}
