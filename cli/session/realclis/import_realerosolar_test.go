package realclis_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	erosolarim "github.com/loomhq/loom/importer/erosolar"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/termtest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealErosolar: Erosolar (its interactive shell on a
// terminal, its openai provider chosen by $EROSOLAR_CODE_PROVIDER on
// the Responses API of a fake model at $OPENAI_BASE_URL; no account)
// is asked for a greeting and then to read notes.txt, and saves the
// conversation with `/sessions save Greeting`, the only way it keeps
// one. What loom imports is what the model was asked and answered;
// Erosolar keeps no usage and no reasoning.
func TestImportRealErosolar(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.Erosolar)
	fx := clitest.NewEmptyFixture(t)
	srv := agentclitest.NewScriptedResponses()
	t.Cleanup(srv.Close)
	srv.Enqueue(agentclitest.Turn{Text: "Hello there.", Usage: agentclitest.Usage{Input: 120, Output: 9}},
		agentclitest.Turn{Calls: []providertest.ToolCall{{ID: "call_read", Name: "read_file", Args: `{"path":"notes.txt"}`}}, Usage: agentclitest.Usage{Input: 200, Output: 12}},
		agentclitest.Turn{Text: "It says alpha and beta.", Usage: agentclitest.Usage{Input: 260, Output: 10}})
	dir := filepath.Join(fx.Home, "work")
	clitest.MustWrite(t, filepath.Join(dir, "notes.txt"), "alpha\nbeta\n")
	cmd := exec.Command(bin)
	cmd.Dir = dir
	// Under CI its shell takes no keyboard input: it runs without.
	cmd.Env = slices.DeleteFunc(agentclitest.Env(fx.Home, "TERM=xterm", "OPENAI_API_KEY=sk-fake", "OPENAI_BASE_URL="+srv.URL+"/v1",
		"EROSOLAR_CODE_PROVIDER=openai", "EROSOLAR_CODE_MODEL=gpt-fake", "EROSOLAR_DISABLE_AUTO_UPDATE=1"),
		func(kv string) bool { return kv == "CI=1" || kv == "NO_COLOR=1" })
	term := termtest.Start(t, cmd, 120, 40)
	term.WaitForWithin(t, "Ready for prompts", clitest.CLITimeout)
	// Erosolar redraws its screen as it answers, so a reply is awaited
	// by the model's answers, and the save by the file it writes.
	saved := filepath.Join(fx.Home, ".erosolar", "sessions", "index.json")
	for _, c := range []struct {
		say  string
		done func() bool
	}{
		{"Say hello in one line.", func() bool { return len(srv.Answered()) == 1 }},
		{"What is in notes.txt?", func() bool { return len(srv.Answered()) == 3 }},
		{"/sessions save Greeting", func() bool { _, err := os.Stat(saved); return err == nil }},
	} {
		// Typed as a person types: Erosolar takes text and Enter that
		// come at once for a paste, which it does not send.
		time.Sleep(time.Second)
		for _, r := range c.say {
			term.Send(string(r))
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		term.Send("\r")
		for deadline := time.Now().Add(time.Minute); !c.done(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%q: timed out; the terminal shows:\n%s", c.say, term.Output())
			}
		}
	}
	// And its notice, written once the index is.
	term.WaitForWithin(t, "Session saved", time.Minute)
	rep := clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", erosolarim.Tool, "--json"))
	if tr := clitest.ToolReport(t, rep, erosolarim.Tool); tr.SessionsNew != 1 || tr.MessagesAdded != 6 || tr.FilesFailed != 0 || len(tr.Problems) != 0 {
		t.Fatalf("import: %+v", tr)
	}
	checkFidelity(t, fx, erosolarim.Tool, agentclitest.TurnAnswers(srv.Answered()), agentclitest.Expect{NoUsage: true, NoReasoning: true})
}
