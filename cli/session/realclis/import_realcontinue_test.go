package realclis_test

import (
	"context"
	"os"
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

// TestImportRealContinue installs Continue's cn from npm, runs it
// offline against a fake OpenAI-compatible server (a plain prompt, a
// second turn with --resume, a tool call), and imports what it wrote:
// each prompt and reply once, in order, the tool call with its result,
// the usage cn recorded; a second import adds nothing, and --watch
// imports a turn a later run adds.
func TestImportRealContinue(t *testing.T) {
	clitest.RealAgentsOnce(t)
	cn := agentclitest.Install(t, agentclitest.Continue)
	fx := clitest.NewEmptyFixture(t)
	home, work := fx.Home, t.TempDir()
	clitest.MustWrite(t, filepath.Join(work, "notes.txt"), "alpha\nbeta\n")
	srv := openaitest.NewServer()
	defer srv.Close()
	config := filepath.Join(home, "config.yaml")
	clitest.MustWrite(t, config, "name: loom-test\nversion: 0.0.1\nschema: v1\nmodels:\n  - name: fake\n    provider: openai\n    model: gpt-4o\n    apiBase: "+srv.BaseURL()+"\n    apiKey: test-key\n    roles: [chat]\n")
	env := agentclitest.Env(home)
	run := func(args ...string) string {
		t.Helper()
		return agentclitest.Run(t, 3*time.Minute, work, env, cn, append([]string{"--config", config}, args...)...)
	}
	usage := func(in, out int64) *openaitest.Usage {
		return &openaitest.Usage{PromptTokens: in, CompletionTokens: out}
	}

	srv.Enqueue(openaitest.Reply{Text: "Hello there.", Usage: usage(900, 5)})
	if out := run("-p", "Say hello in one line."); !strings.Contains(out, "Hello there.") {
		t.Fatalf("cn -p: %s", out)
	}
	srv.Enqueue(openaitest.Reply{Text: "Resumed and answering.", Usage: usage(1000, 4)})
	run("-p", "--resume", "One more on the greeting?")

	srv.Enqueue(
		openaitest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call_read", Name: "Read", Args: `{"filepath":"` + filepath.Join(work, "notes.txt") + `"}`}}, Usage: usage(1100, 20)},
		openaitest.Reply{Text: "It says alpha and beta.", Usage: usage(1300, 9)},
	)
	run("-p", "--auto", "What is in notes.txt?")
	if n := len(srv.Requests()); n != 4 {
		t.Logf("cn made %d model calls, 4 expected", n)
	}

	code, rep, stderr := fx.ImportAll(t, false, "--from", "continue", filepath.Join(home, ".continue"))
	tr := clitest.ToolReport(t, rep, "continue")
	if code != 0 || tr.SessionsNew != 2 || len(tr.Problems) != 0 {
		t.Fatalf("import: exit %d, %+v, %s", code, tr, stderr)
	}
	st := fx.OpenStore(t)
	ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "local", Surface: "continue"})
	if err != nil || len(ss) != 2 {
		t.Fatalf("sessions %v %v", ss, err)
	}
	var texts []string
	var tools []loom.Part
	for _, s := range ss {
		msgs, err := st.Messages(context.Background(), s.ID, loom.MessageQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			texts = append(texts, m.Role+": "+m.Text())
			for _, p := range m.Parts {
				if p.Type == loom.PartTool {
					tools = append(tools, p)
				}
			}
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{
		"user: Say hello in one line.\nassistant: Hello there.\nuser: One more on the greeting?\nassistant: Resumed and answering.",
		"user: What is in notes.txt?\n",
		"assistant: It says alpha and beta.",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("imported messages lack %q:\n%s", want, all)
		}
	}
	if strings.Count(all, "Say hello in one line.") != 1 {
		t.Errorf("a prompt imported twice:\n%s", all)
	}
	if len(tools) != 1 || tools[0].Name != "Read" || tools[0].Status != loom.ToolCompleted || !strings.Contains(string(tools[0].Output), "beta") {
		t.Errorf("tool parts %+v", tools)
	}
	var in, out int64
	for _, s := range ss {
		in, out = in+s.Usage.InputTokens, out+s.Usage.OutputTokens
	}
	if in != 900+1000+1100+1300 || out != 5+4+20+9 {
		t.Errorf("usage %d in, %d out", in, out)
	}
	checkFidelity(t, fx, "continue", agentclitest.OpenAIAnswers(srv.Answered()), agentclitest.Expect{})
	// A second import adds nothing.
	_, rep, _ = fx.ImportAll(t, false, "--from", "continue", filepath.Join(home, ".continue"))
	if tr := clitest.ToolReport(t, rep, "continue"); tr.MessagesAdded != 0 || tr.SessionsNew != 0 {
		t.Errorf("second import %+v", tr)
	}
	checkWatched(t, fx, "continue", func() {
		srv.Enqueue(openaitest.Reply{Text: "Watched and answered.", Usage: usage(1400, 3)})
		run("-p", "--resume", "A turn while watched?")
	}, "Watched and answered")
	if t.Failed() {
		for _, e := range []string{"sessions"} {
			files, _ := filepath.Glob(filepath.Join(home, ".continue", e, "*.json"))
			for _, f := range files {
				b, _ := os.ReadFile(f)
				t.Logf("%s:\n%s", f, b)
			}
		}
	}
}
