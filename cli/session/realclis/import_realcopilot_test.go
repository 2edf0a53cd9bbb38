package realclis_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	copilotim "github.com/loomhq/loom/importer/copilot"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealCopilot: GitHub Copilot CLI (`copilot -p`, one prompt a
// process), offline (COPILOT_OFFLINE) against a fake OpenAI-compatible
// model it reaches as a provider of the user's own
// (COPILOT_PROVIDER_BASE_URL, no login), runs the flows of
// runChatFlows: a second turn with `--continue`, a view of a file, a
// sub-agent with its task tool (sync), and `/compact`, whose model
// call's usage Copilot CLI records; and a compaction started in the
// background and cancelled after its model call, whose usage it
// records too.
func TestImportRealCopilot(t *testing.T) {
	clitest.RealAgentsOnce(t)
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
	kept := false
	a.extra = func(t *testing.T) []*flowWant {
		// With a prompt budget of 14000 tokens, the first call's context
		// is over Copilot CLI's threshold: it compacts in the background,
		// and the turn ends before the compaction is applied, which is
		// cancelled after its model call.
		small := append(env[:len(env):len(env)], "COPILOT_PROVIDER_MAX_PROMPT_TOKENS=14000")
		dir := filepath.Join(a.fx.Home, "small")
		clitest.MustWrite(t, filepath.Join(dir, "notes.txt"), "alpha\nbeta\n")
		usage := func(in, out int64) *openaitest.Usage {
			return &openaitest.Usage{PromptTokens: in, CompletionTokens: out}
		}
		cancelled := &flowWant{flow: "cancelled compaction", prompts: []string{"What is in the small notes.txt?"},
			replies: []string{"Reading.", "It says alpha and beta."}, tools: []toolWant{{"view", "beta"}},
			usage: usageOf(13000+5000+13500, 0, 10+30+9, 0), calls: 3}
		a.sc.On(cancelled.prompts[0], a.sc.Answer(openaitest.Reply{Text: "Reading.", Usage: usage(13000, 10),
			ToolCalls: []providertest.ToolCall{a.read(filepath.Join(dir, "notes.txt"))}}))
		a.sc.On(a.asks, a.sc.Answer(openaitest.Reply{Text: "A summary no one kept.", Usage: usage(5000, 30)}))
		a.sc.On("beta", a.sc.Answer(openaitest.Reply{Text: "It says alpha and beta.", Usage: usage(13500, 9)}))
		agentclitest.Run(t, clitest.CLITimeout, dir, small, bin, a.tools(cancelled.prompts[0])...)
		// Whether the turn ends before the compaction is applied is
		// Copilot CLI's race: on a busy machine the compaction can end
		// first, and Copilot CLI then keeps its summary. What loom must
		// import is what Copilot CLI wrote, so the test reads that.
		if kept = copilotKeptSummary(t, filepath.Join(a.fx.Home, ".copilot"), "A summary no one kept."); kept {
			t.Log("Copilot CLI applied the background compaction before the turn ended: its summary is kept")
			cancelled.summaries = 1
		}
		return []*flowWant{cancelled}
	}
	// The compaction cancelled after its call keeps the call, not its
	// summary.
	a.fidelity.Discarded = func(x agentclitest.Answer) bool { return !kept && x.Text == "A summary no one kept." }
	runChatFlows(t, a)
}

// copilotKeptSummary reports whether a session of Copilot CLI's under
// home ended a compaction keeping the summary text.
func copilotKeptSummary(t *testing.T, home, text string) bool {
	t.Helper()
	kept := false
	err := filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
		for sc.Scan() {
			var e struct {
				Type string `json:"type"`
				Data struct {
					Success        *bool  `json:"success"`
					SummaryContent string `json:"summaryContent"`
				} `json:"data"`
			}
			if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type != "session.compaction_complete" {
				continue
			}
			if (e.Data.Success == nil || *e.Data.Success) && strings.Contains(e.Data.SummaryContent, text) {
				kept = true
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatalf("reading Copilot CLI's sessions: %v", err)
	}
	return kept
}
