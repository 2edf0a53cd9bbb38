package realclis_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// opencodeFamily is a program of opencode's line, run for real: opencode
// itself or a fork of it (Kilo Code's CLI), which take the same `run`
// arguments and config, under their own names.
type opencodeFamily struct {
	pkg  agentclitest.Package
	tool string // loom's name for it: --from
	// config is the config file, relative to HOME.
	config string
	// env turns off what would reach the network: the model list's
	// fetch, updates, plugins installed from npm.
	env []string
	// turnsOnly runs the prompt and its continued turn only, for a
	// program of the same format whose runs take minutes each.
	turnsOnly bool
	// provider is the provider the fake model is configured as, ""
	// for one named fake (a fork that admits only its own provider
	// names that one).
	provider string
	// files are written under HOME before the first run (relative
	// path → content).
	files map[string]string
}

// runOpencodeFamily runs the program offline against a fake OpenAI
// Chat Completions server, a custom provider of its config file: a
// plain prompt with reasoning, a turn more with `run --continue`, and
// unless p.turnsOnly a file read and a sub-agent (the task tool); each
// imports faithfully with the usage and cost the program recorded, a
// second import adds nothing, and `--watch` imports a turn a later
// `run --continue` appends.
func runOpencodeFamily(t *testing.T, p opencodeFamily) {
	clitest.SkipOnPostgres(t, "runs the real agent once, on the SQLite pass")
	bin := agentclitest.Install(t, p.pkg)
	fx := clitest.NewEmptyFixture(t)
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	sc := &clitest.Script[openaitest.Reply]{Last: func(r providertest.Request) string { return clitest.LastJSON(r, "messages") }}
	srv.Respond(func(r providertest.Request) (openaitest.Reply, bool) {
		// The title of a new session is asked for by a call without
		// tools; it counts in no session's usage.
		if _, ok := r.Body["tools"]; !ok {
			return openaitest.Reply{Text: "A titled session", Usage: &openaitest.Usage{PromptTokens: 7, CompletionTokens: 3}}, true
		}
		return sc.Respond(r)
	})
	provider := p.provider
	if provider == "" {
		provider = "fake"
	}
	for name, content := range p.files {
		clitest.MustWrite(t, filepath.Join(fx.Home, name), content)
	}
	clitest.MustWrite(t, filepath.Join(fx.Home, p.config), `{"autoupdate": false, "share": "disabled", "model": "`+provider+`/gpt-fake",
		"provider": {"`+provider+`": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": {"baseURL": "`+srv.BaseURL()+`", "apiKey": "sk-fake"},
			"models": {"gpt-fake": {"name": "GPT Fake", "reasoning": true, "cost": {"input": 1, "output": 2}}}}}}`)
	env := agentclitest.Env(fx.Home, p.env...)
	dir := filepath.Join(fx.Home, "work")
	clitest.MustWrite(t, filepath.Join(dir, "notes.txt"), "alpha\nbeta\n")
	// The prompt goes on stdin: `run` quotes each argument it joins into
	// the prompt. A run takes its time (the program starts a server of
	// its own, a file watcher, language tools): minutes on a busy machine.
	run := func(prompt string, args ...string) string {
		return runAgentWithin(t, 8*time.Minute, dir, env, prompt, bin, append([]string{"run"}, args...)...)
	}
	usage := func(in, cached, out, reasoning int64) *openaitest.Usage {
		return &openaitest.Usage{PromptTokens: in, CachedTokens: cached, CompletionTokens: out, ReasoningTokens: reasoning}
	}
	say := func(r openaitest.Reply) func(string) openaitest.Reply { return sc.Answer(r) }
	started := time.Now()

	plain := &flowWant{flow: "plain and continued", prompts: []string{"Say hello in one line.", "One more on the greeting?"},
		replies: []string{"Hello there.", "Continued and answering."}, reasoning: []string{"A greeting."},
		usage: &loom.Usage{InputTokens: 800 + 2100, CacheReadTokens: 200, OutputTokens: 15 + 4, ReasoningTokens: 5}}
	sc.On(plain.prompts[0], say(openaitest.Reply{Reasoning: "A greeting.", Text: "Hello there.", Usage: usage(1000, 200, 15, 5)}))
	sc.On(plain.prompts[1], say(openaitest.Reply{Text: "Continued and answering.", Usage: usage(2100, 0, 4, 0)}))
	if out := run(plain.prompts[0]); !strings.Contains(out, "Hello there.") {
		t.Fatalf("run: %s", out)
	}
	run(plain.prompts[1], "--continue")
	flows := []*flowWant{plain}
	// The config's prices, a dollar a million tokens in and two out,
	// over every call's tokens but the titles' (cached ones are free).
	in, out := int64(800+2100), int64(15+4)
	if !p.turnsOnly {
		flows = append(flows, otherOpencodeFlows(sc, run, dir)...)
		in, out = in+1300+1400+1500+600+1700, out+40+9+30+3+2
	}
	t.Logf("%s ran %d model calls in %s", p.pkg.Bin, len(srv.Requests()), time.Since(started).Round(time.Millisecond))

	keepAgentHome(fx)
	checkImportedFlows(t, fx, p.tool, flows)
	checkFidelity(t, fx, p.tool, agentclitest.OpenAIAnswers(srv.Answered()), agentclitest.Expect{NotRecorded: map[string]func(providertest.Request) bool{
		"the call that titles a new session": func(r providertest.Request) bool { _, tools := r.Body["tools"]; return !tools }}})
	var cost float64
	for _, s := range clitest.DecodeJSON[[]*loom.Session](t, fx.MustExec(t, "session", "list", "-a", "--surface", p.tool, "--json")) {
		cost += s.Usage.CostUSD
	}
	if want := float64(in)/1e6 + float64(out)*2/1e6; cost < want*0.99 || cost > want*1.01 {
		t.Errorf("cost %g, want %g", cost, want)
	}

	rep := clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", p.tool, "--json"))
	if tr := clitest.ToolReport(t, rep, p.tool); tr.MessagesAdded != 0 || tr.SessionsNew != 0 || tr.SessionsGrown != 0 {
		t.Errorf("second import: %+v", tr)
	}

	sc.On("A third turn while watched?", sc.Answer(openaitest.Reply{Text: "Watched and answered.", Usage: &openaitest.Usage{PromptTokens: 2500, CompletionTokens: 3}}))
	checkWatched(t, fx, p.tool, func() { run("A third turn while watched?", "--continue") }, "Watched and answered")
}

// otherOpencodeFlows runs a file read and a sub-agent (the task tool)
// with run, each a session of its own, and returns what they must
// import as.
func otherOpencodeFlows(sc *clitest.Script[openaitest.Reply], run func(string, ...string) string, dir string) []*flowWant {
	usage := func(in, out int64) *openaitest.Usage {
		return &openaitest.Usage{PromptTokens: in, CompletionTokens: out}
	}
	say := func(r openaitest.Reply) func(string) openaitest.Reply { return sc.Answer(r) }
	tools := &flowWant{flow: "tools and reasoning", prompts: []string{"What is in notes.txt?"},
		replies: []string{"It says alpha and beta."}, reasoning: []string{"The user wants the file."},
		tools: []toolWant{{"read", "beta"}}, usage: &loom.Usage{InputTokens: 1300 + 1400, OutputTokens: 40 + 9}}
	sc.On(tools.prompts[0], say(openaitest.Reply{Reasoning: "The user wants the file.", Usage: usage(1300, 40),
		ToolCalls: []providertest.ToolCall{{ID: "call_read", Name: "read", Args: `{"filePath":"` + filepath.Join(dir, "notes.txt") + `"}`}}}))
	sc.On("beta", say(openaitest.Reply{Text: "It says alpha and beta.", Usage: usage(1400, 9)}))
	run(tools.prompts[0])

	sub := &flowWant{flow: "sub-agent", prompts: []string{"Sub task: say sub hello"}, replies: []string{"Sub done."},
		usage: &loom.Usage{InputTokens: 600, OutputTokens: 3}}
	parent := &flowWant{flow: "task", prompts: []string{"Delegate this to a sub-agent."}, replies: []string{"Delegated."},
		tools: []toolWant{{"task", "Sub done."}}, sub: sub, usage: &loom.Usage{InputTokens: 1500 + 1700, OutputTokens: 30 + 2}}
	sc.On(parent.prompts[0], say(openaitest.Reply{Usage: usage(1500, 30), ToolCalls: []providertest.ToolCall{{ID: "call_task", Name: "task",
		Args: `{"description":"Say sub hello","prompt":"Sub task: say sub hello","subagent_type":"general"}`}}}))
	sc.On(sub.prompts[0], say(openaitest.Reply{Text: "Sub done.", Usage: usage(600, 3)}))
	sc.On("Sub done.", say(openaitest.Reply{Text: "Delegated.", Usage: usage(1700, 2)}))
	run(parent.prompts[0])
	return []*flowWant{tools, parent}
}

// TestImportRealOpencode: opencode's current release, run for real.
func TestImportRealOpencode(t *testing.T) {
	t.Parallel()
	runOpencodeFamily(t, opencodeFamily{pkg: agentclitest.Opencode, tool: "opencode",
		config: ".config/opencode/opencode.json",
		env:    []string{"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1"}})
}

// TestImportRealKilo: Kilo Code's CLI, a fork of opencode, run for real:
// a prompt and its continued turn, imported under Kilo's own name.
func TestImportRealKilo(t *testing.T) {
	t.Parallel()
	runOpencodeFamily(t, opencodeFamily{pkg: agentclitest.Kilo, tool: "kilo",
		config: ".config/kilo/kilo.json",
		env: []string{"KILO_DISABLE_MODELS_FETCH=1", "KILO_DISABLE_AUTOUPDATE=1", "KILO_DISABLE_DEFAULT_PLUGINS=1",
			"KILO_DISABLE_SESSION_INGEST=1", "KILO_TELEMETRY_LEVEL=off"},
		// Its database is opencode's, read by the same code, which
		// TestImportRealOpencode runs through every flow.
		turnsOnly: true})
}

// TestImportRealNanoCode: NanoCode, a fork of opencode, run for real
// through opencode's flows, imported under NanoCode's own name from the
// database it keeps in its data directory (opencode-dev.db, a name of
// its release channel).
func TestImportRealNanoCode(t *testing.T) {
	t.Parallel()
	runOpencodeFamily(t, opencodeFamily{pkg: agentclitest.NanoCode, tool: "nanocode",
		config: ".config/nanocode/nanocode.json",
		env: []string{"NANOGPT_DISABLE_MODELS_FETCH=1", "NANOGPT_DISABLE_AUTOUPDATE=1", "NANOGPT_DISABLE_DEFAULT_PLUGINS=1",
			"NANOGPT_DISABLE_SHARE=1", "NANOGPT_DISABLE_LSP_DOWNLOAD=1", "NANOGPT_DISABLE_CLAUDE_CODE=1"},
		// It admits no provider but its own, nanogpt, whose address
		// the config sets to the fake model's.
		provider: "nanogpt",
		// Without an install method on record it looks for one by
		// running `bun pm ls -g`, which in its own build runs
		// nanocode again, and so on without end.
		files: map[string]string{".config/nanocode/install-method": "gh-release"}})
}
