package realclis_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// chatAgent is a real agent that speaks OpenAI's Chat Completions to a
// fake model (openaitest, answering by the script sc), run through the
// flows of runChatFlows (TestImportRealQwen, TestImportRealCopilot).
type chatAgent struct {
	tool string
	fx   *clitest.Fixture
	srv  *openaitest.Server
	sc   *clitest.Script[openaitest.Reply]
	// run runs the agent in dir with args.
	run func(t *testing.T, dir string, args ...string)
	// prompt, more and tools are the agent's arguments for a prompt in a
	// new session, a prompt that continues the last session, and a
	// prompt whose tool calls run without asking; nil more leaves out
	// the second turn of the plain flow (an agent that continues a
	// session only in its interactive interface), and the turn --watch
	// follows is a new session.
	prompt, more, tools func(prompt string) []string
	// read is the agent's call that reads a file, agent its call that
	// runs a sub-agent with a task; nil agent leaves out the flow of a
	// sub-agent and a compaction (an agent whose sub-agents and
	// compaction cannot be run here).
	read  func(path string) providertest.ToolCall
	agent func(task string) providertest.ToolCall
	// compact is the prompt that compacts the session (a command), and
	// asks a piece of the agent's request for the summary.
	compact, asks string
	// summary is the compaction's summary the fake model answers with
	// ("" for a short one of its own).
	summary string
	// compactUsage says the session records the usage of the
	// compaction's own model call; noUsage that it records no usage at
	// all (its flows' usage is not checked).
	compactUsage, noUsage bool
	// noReasoningTokens says the agent keeps no count of the reasoning
	// tokens its model reports (its output counts them); noReasoning
	// that it keeps no reasoning at all.
	noReasoningTokens, noReasoning bool
	// extra runs the flows of this agent alone, in fx's HOME, and
	// returns what each must import as.
	extra func(t *testing.T) []*flowWant
	// fidelity is how the agent records its calls
	// (agentclitest.CheckFidelity); Summary is set from asks.
	fidelity agentclitest.Expect
}

// newChatAgent is a chatAgent of tool in a fixture with its fake model.
func newChatAgent(t *testing.T, tool string) *chatAgent {
	t.Helper()
	a := &chatAgent{tool: tool, fx: clitest.NewEmptyFixture(t), srv: openaitest.NewServer()}
	t.Cleanup(a.srv.Close)
	a.sc = &clitest.Script[openaitest.Reply]{Last: func(r providertest.Request) string { return clitest.LastJSON(r, "messages") }}
	a.srv.Respond(a.sc.Respond)
	return a
}

// runChatFlows runs the agent through a plain prompt and a turn more on
// it, a file read with reasoning, and a sub-agent followed by a
// compaction and a turn after it, each session in a directory of its
// own; each imports faithfully, the sub-agent linked and the compaction
// a summary; a second import adds nothing, and `--watch` imports a turn
// a later run appends.
func runChatFlows(t *testing.T, a *chatAgent) {
	t.Helper()
	started := time.Now()
	fx, sc := a.fx, a.sc
	dir := func(name string) string {
		d := filepath.Join(fx.Home, name)
		clitest.MustWrite(t, filepath.Join(d, "notes.txt"), "alpha\nbeta\n")
		return d
	}
	usage := func(in, cached, out, reasoning int64) *openaitest.Usage {
		return &openaitest.Usage{PromptTokens: in, CachedTokens: cached, CompletionTokens: out, ReasoningTokens: reasoning}
	}
	say := func(think, text string, u *openaitest.Usage, calls ...providertest.ToolCall) func(string) openaitest.Reply {
		return sc.Answer(openaitest.Reply{Reasoning: think, Text: text, ToolCalls: calls, Usage: u})
	}

	work := dir("work")
	plain := &flowWant{flow: "plain and continued", prompts: []string{"Say hello in one line.", "One more on the greeting?"},
		replies: []string{"Hello there.", "Continued and answering."}, reasoning: []string{"A greeting."},
		usage: usageOf(800+2100, 200, 15+4, 5)}
	sc.On(plain.prompts[0], say("A greeting.", "Hello there.", usage(1000, 200, 15, 5)))
	sc.On(plain.prompts[1], say("", "Continued and answering.", usage(2100, 0, 4, 0)))
	a.run(t, work, a.prompt(plain.prompts[0])...)
	if a.more != nil {
		a.run(t, work, a.more(plain.prompts[1])...)
	} else {
		plain.prompts, plain.replies, plain.usage = plain.prompts[:1], plain.replies[:1], usageOf(800, 200, 15, 5)
	}

	other := dir("other")
	read := a.read(filepath.Join(other, "notes.txt"))
	tools := &flowWant{flow: "tools and reasoning", prompts: []string{"What is in notes.txt?"},
		replies: []string{"It says alpha and beta."}, reasoning: []string{"The user wants the file.", "Both lines are read."},
		tools: []toolWant{{read.Name, "beta"}}, usage: usageOf(1000+1400, 300, 40+9, 20+3)}
	sc.On(tools.prompts[0], say("The user wants the file.", "", usage(1300, 300, 40, 20), read))
	sc.On("beta", say("Both lines are read.", "It says alpha and beta.", usage(1400, 0, 9, 3)))
	a.run(t, other, a.tools(tools.prompts[0])...)

	wants := []*flowWant{plain, tools}
	if a.agent != nil {
		team := dir("team")
		sub := &flowWant{flow: "sub-agent", prompts: []string{"SUBTASK-COUNT: count the lines of notes.txt"},
			replies: []string{"The sub-agent counted two lines."}, usage: usageOf(600, 0, 7, 0)}
		call := a.agent(sub.prompts[0])
		agents := &flowWant{flow: "sub-agent and compaction", prompts: []string{"Delegate the count to a helper.", "After the compaction?"},
			replies: []string{"The helper says two lines.", "Still here after the summary."}, summaries: 1,
			tools: []toolWant{{call.Name, "two lines"}}, sub: sub, usage: usageOf(1500+1600+1700, 0, 20+8+6, 0)}
		if a.compactUsage {
			agents.usage.InputTokens, agents.usage.OutputTokens = agents.usage.InputTokens+5000, agents.usage.OutputTokens+30
		}
		sc.On(agents.prompts[0], say("", "", usage(1500, 0, 20, 0), call))
		sc.On("SUBTASK-COUNT", say("", sub.replies[0], usage(600, 0, 7, 0)))
		sc.On("sub-agent counted", say("", agents.replies[0], usage(1600, 0, 8, 0)))
		// Qwen Code keeps a compression only when the summary's call says
		// it saved tokens.
		summary := a.summary
		if summary == "" {
			summary = "<state_snapshot>One count was delegated.</state_snapshot>"
		}
		sc.On(a.asks, say("", summary, usage(5000, 0, 30, 0)))
		sc.On(agents.prompts[1], say("", agents.replies[1], usage(1700, 0, 6, 0)))
		a.run(t, team, a.tools(agents.prompts[0])...)
		a.run(t, team, a.more(a.compact)...)
		a.run(t, team, a.more(agents.prompts[1])...)
		wants = append(wants, agents)
	}
	if a.extra != nil {
		wants = append(wants, a.extra(t)...)
	}
	t.Logf("%s ran %d model calls in %s", a.tool, len(a.srv.Requests()), time.Since(started).Round(time.Millisecond))

	if a.noUsage {
		for _, w := range wants {
			w.usage = nil
		}
		a.fidelity.NoUsage = true
	}
	if a.noReasoning {
		for _, w := range wants {
			w.reasoning = nil
		}
		a.fidelity.NoReasoning = true
	}
	if a.noReasoningTokens {
		for _, w := range wants {
			if w.usage != nil {
				w.usage.ReasoningTokens = 0
			}
		}
	}
	keepAgentHome(fx)
	checkImportedFlows(t, fx, a.tool, wants)
	if a.asks != "" {
		a.fidelity.Summary = asks(a.asks)
	}
	checkFidelity(t, fx, a.tool, agentclitest.OpenAIAnswers(a.srv.Answered()), a.fidelity)

	// A second import adds nothing; --watch imports a turn a later run
	// appends.
	sc.On("A third turn while watched?", say("", "Watched and answered.", usage(2500, 0, 3, 0)))
	more := a.more
	if more == nil {
		more = a.prompt
	}
	checkReimportAndWatch(t, fx, a.tool, "Watched and answered", func() { a.run(t, work, more("A third turn while watched?")...) })
}
