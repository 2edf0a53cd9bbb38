package realclis_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	opencodexim "github.com/loomhq/loom/importer/opencodex"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/termtest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealOpenCodex: Open Codex (`open-codex --provider ollama` on
// a terminal, on Node 24, $OLLAMA_BASE_URL naming the Chat Completions
// API of a fake model; no account) runs the plain and reading flows of
// runChatFlows, and a run of two prompts, which Open Codex saves as two
// files, each with the whole conversation: one session. Open Codex
// saves a session only from its terminal interface, two seconds after
// the last item arrived, each time to a new file, so each turn waits
// for a saved file that ends with a reply; the run then leaves with
// Ctrl+C.
// It continues no session (no resume), keeps no reasoning and no usage,
// and has no sub-agents or compaction, so those flows are not run.
func TestImportRealOpenCodex(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.OpenCodex)
	a := newChatAgent(t, opencodexim.Tool)
	// A check for a newer version made just now: none is made (it would
	// ask the registry).
	clitest.WriteSettings(t, filepath.Join(a.fx.Home, ".codex", "update-check.json"),
		`{"lastUpdateCheck": "`+time.Now().UTC().Format(time.RFC1123)+`"}`)
	// Its interface (Ink) draws nothing until it exits where CI is set.
	env := agentclitest.WithCommand(t, agentclitest.Node24, agentclitest.Env(a.fx.Home, "TERM=xterm", "CI=false",
		"OLLAMA_BASE_URL="+a.srv.BaseURL(), "OPENAI_API_KEY=sk-fake"))
	sessions := filepath.Join(a.fx.Home, ".codex", "sessions")
	// converse runs Open Codex in dir on the first prompt, and types each
	// of the others in its interface once the turn before is saved.
	converse := func(t *testing.T, dir string, prompts ...string) {
		t.Helper()
		cmd := exec.Command(bin, "--provider", "ollama", "--model", "gpt-fake", "--dangerously-auto-approve-everything", prompts[0])
		cmd.Dir, cmd.Env = dir, env
		saved := savedReplies(t, sessions)
		term := termtest.Start(t, cmd, 120, 40)
		// Outside a git repository it asks before it starts.
		term.WaitForWithin(t, "Do you want to continue?", clitest.CLITimeout)
		term.Send("y")
		for i := range prompts {
			if i > 0 {
				// Typed, then sent: text and Enter in one write are
				// taken as pasted text, the Enter in it.
				term.Send(prompts[i])
				term.WaitForScreen(t, prompts[i], clitest.CLITimeout)
				term.Send("\r")
			}
			deadline := time.Now().Add(clitest.CLITimeout)
			for savedReplies(t, sessions) == saved {
				if time.Now().After(deadline) {
					t.Fatalf("open-codex saved no session ending with a reply to %q; the terminal shows:\n%s", prompts[i], term.Screen())
				}
				time.Sleep(50 * time.Millisecond)
			}
			saved++
		}
		term.Send("\x03")
		term.WaitWithin(t, clitest.CLITimeout)
	}
	a.run = func(t *testing.T, dir string, args ...string) { t.Helper(); converse(t, dir, args...) }
	a.prompt = func(p string) []string { return []string{p} }
	a.more = nil
	a.tools = a.prompt
	a.read = func(path string) providertest.ToolCall {
		args, _ := json.Marshal(map[string]any{"command": []string{"cat", path}})
		return providertest.ToolCall{Name: "shell", Args: string(args)}
	}
	a.agent = nil
	a.noUsage, a.noReasoning = true, true
	a.extra = func(t *testing.T) []*flowWant {
		// Two prompts in one run: Open Codex saves the conversation
		// twice, in two files, the second holding the first's messages
		// again; one session, each message once.
		dir := filepath.Join(a.fx.Home, "twice")
		clitest.MustWrite(t, filepath.Join(dir, "notes.txt"), "alpha\nbeta\n")
		twice := &flowWant{flow: "two saves of one conversation", prompts: []string{"First of two turns?", "Second of two turns?"},
			replies: []string{"First answered.", "Second answered."}}
		for i, p := range twice.prompts {
			a.sc.On(p, a.sc.Answer(openaitest.Reply{Text: twice.replies[i], Usage: &openaitest.Usage{PromptTokens: 900, CompletionTokens: 4}}))
		}
		converse(t, dir, twice.prompts...)
		if n := savedReplies(t, sessions); n < 2 {
			t.Fatalf("%d saved files, want one for each turn at least", n)
		}
		return []*flowWant{twice}
	}
	runChatFlows(t, a)
}

// savedReplies counts the files Open Codex saved in dir whose last item
// is a reply (an assistant's text, no call pending).
func savedReplies(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "rollout-") || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Items []struct {
				Role      string          `json:"role"`
				Content   json.RawMessage `json:"content"`
				ToolCalls []any           `json:"tool_calls"`
			} `json:"items"`
		}
		// A file being written is not counted yet.
		if json.Unmarshal(data, &doc) != nil || len(doc.Items) == 0 {
			continue
		}
		if l := doc.Items[len(doc.Items)-1]; l.Role == "assistant" && len(l.ToolCalls) == 0 && len(l.Content) > 2 {
			n++
		}
	}
	return n
}
