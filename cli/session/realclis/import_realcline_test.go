package realclis_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clineim "github.com/loomhq/loom/importer/cline"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/termtest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// TestImportRealCline: Cline's CLI (configured with `cline auth openai
// --baseurl` for a fake OpenAI Chat Completions server) writes a prompt
// answered with reasoning, continued by a second turn and /compact in
// its terminal interface (`cline --id ID`, which resumes only
// interactively: driven on a pseudo-terminal), a file read, and a
// sub-agent that spawn_agent runs; each imports faithfully with the
// tokens Cline recorded, the compaction's summary, the sub-agent linked
// to its parent; a second import adds nothing, and `--watch` imports a
// session a later `cline` run writes. The hub daemon Cline
// leaves running is stopped when the test ends.
func TestImportRealCline(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.Cline)
	fx := clitest.NewEmptyFixture(t)
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	sc := &clitest.Script[openaitest.Reply]{Last: func(r providertest.Request) string { return clitest.LastJSON(r, "messages") }}
	srv.Respond(sc.Respond)
	env := agentclitest.Env(fx.Home)
	dir := filepath.Join(fx.Home, "work")
	clitest.MustWrite(t, filepath.Join(dir, "notes.txt"), "alpha\nbeta\n")
	t.Cleanup(func() { stopClineHub(t, fx.Home) })
	cline := func(args ...string) string { return agentclitest.Run(t, 4*time.Minute, dir, env, bin, args...) }
	cline("auth", "openai", "--apikey", "sk-fake", "--modelid", "gpt-fake", "--baseurl", srv.BaseURL())
	usage := func(in, cached, out int64) *openaitest.Usage {
		return &openaitest.Usage{PromptTokens: in, CachedTokens: cached, CompletionTokens: out}
	}

	// The second turn is followed by /compact: cline asks the model for
	// a summary, keeps it in <id>.compaction.json and records the call's
	// usage nowhere.
	turns := &flowWant{flow: "two turns and /compact", prompts: []string{"Say hello in one line.", "One more on the greeting?"},
		replies: []string{"Hello there.", "Continued and answering."}, reasoning: []string{"A greeting."}, summaries: 1,
		usage: usageOf(800+2100, 200, 15+4, 0)}
	sc.On(turns.prompts[0], sc.Answer(openaitest.Reply{Reasoning: "A greeting.", Text: "Hello there.", Usage: usage(1000, 200, 15)}))
	sc.On(turns.prompts[1], sc.Answer(openaitest.Reply{Text: "Continued and answering.", Usage: usage(2100, 0, 4)}))
	sc.On("Summarize this session for continuation", sc.Answer(openaitest.Reply{Text: "## Goal\nGreet the user twice.", Usage: usage(1900, 0, 30)}))
	cline(turns.prompts[0])
	id := clineSession(t, fx.Home, turns.prompts[0])
	// --verbose ends each turn with a line of its totals.
	cmd := exec.Command(bin, "--id", id, "--verbose")
	cmd.Dir, cmd.Env = dir, append(env, "TERM=xterm-256color")
	term := termtest.Start(t, cmd, 120, 40)
	// The interface draws words apart with cursor moves, not spaces:
	// what is waited for is one word, or what the terminal echoes.
	term.WaitForWithin(t, "Say hello", 5*time.Minute)
	clineSubmit(t, term, turns.prompts[1])
	// /compact while a turn runs is dropped without a word, and the
	// status line shows the call's tokens before the turn ends: the
	// turn is over when the line of its totals shows.
	term.WaitForScreen(t, "2,100 tokens", 3*time.Minute)
	term.Send("/compact")
	// Its menu shows once the interface has taken the text in (see
	// clineSubmit); Enter then runs the command.
	term.WaitForScreen(t, "Compact context", time.Minute)
	term.Send("\r")
	term.WaitForScreen(t, "Context compacted", 3*time.Minute)
	// Ctrl+C twice leaves, with a summary of the session.
	term.Send("\x03")
	term.Send("\x03")
	term.WaitForWithin(t, "Session Summary", time.Minute)
	term.Wait(t)

	tools := &flowWant{flow: "tools and reasoning", prompts: []string{"What is in notes.txt?"}, replies: []string{"It says alpha and beta."},
		reasoning: []string{"The user wants the file."}, tools: []toolWant{{"read_files", "2 | beta"}}, usage: usageOf(1300+1400, 0, 40+9, 0)}
	sc.On(tools.prompts[0], sc.Answer(openaitest.Reply{Reasoning: "The user wants the file.", Usage: usage(1300, 0, 40),
		ToolCalls: []providertest.ToolCall{{ID: "call_read", Name: "read_files", Args: `{"files":[{"path":"` + filepath.Join(dir, "notes.txt") + `"}]}`}}}))
	sc.On("beta", sc.Answer(openaitest.Reply{Text: "It says alpha and beta.", Usage: usage(1400, 0, 9)}))
	cline(tools.prompts[0])

	// spawn_agent runs a sub-agent, whose messages cline keeps in its
	// parent's directory (agent_<id>.messages.json).
	task := "SUBTASK-COUNT: count the lines of notes.txt"
	agents := &flowWant{flow: "sub-agent", prompts: []string{"Delegate the count to a helper."},
		replies: []string{"Delegating.", "The helper says two lines."}, tools: []toolWant{{"spawn_agent", "Two lines."}},
		usage: usageOf(1500+1600, 0, 10+8, 0),
		sub:   &flowWant{flow: "sub-agent's session", prompts: []string{task}, replies: []string{"Two lines."}, usage: usageOf(600, 0, 7, 0)}}
	sc.On(agents.prompts[0], sc.Answer(openaitest.Reply{Text: "Delegating.", Usage: usage(1500, 0, 10),
		ToolCalls: []providertest.ToolCall{{ID: "call_spawn", Name: "spawn_agent", Args: `{"systemPrompt":"You count lines.","task":"` + task + `"}`}}}))
	sc.On("SUBTASK-COUNT", sc.Answer(openaitest.Reply{Text: "Two lines.", Usage: usage(600, 0, 7)}))
	sc.On("call_spawn", sc.Answer(openaitest.Reply{Text: "The helper says two lines.", Usage: usage(1600, 0, 8)}))
	cline(agents.prompts[0])

	keepAgentHome(fx)
	checkImportedFlows(t, fx, clineim.Tool, []*flowWant{turns, tools, agents})
	compacts := asks("Summarize this session for continuation")
	checkFidelity(t, fx, clineim.Tool, agentclitest.OpenAIAnswers(srv.Answered()), agentclitest.Expect{Summary: compacts,
		NotRecorded: map[string]func(providertest.Request) bool{"cline's compaction call": compacts}})
	rep := clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", clineim.Tool, "--json"))
	if tr := clitest.ToolReport(t, rep, clineim.Tool); tr.MessagesAdded != 0 || tr.SessionsNew != 0 || tr.SessionsGrown != 0 {
		t.Errorf("second import: %+v", tr)
	}
	sc.On("A prompt while watched?", sc.Answer(openaitest.Reply{Text: "Watched and answered.", Usage: usage(900, 0, 3)}))
	checkWatched(t, fx, clineim.Tool, func() { cline("A prompt while watched?") }, "Watched and answered")
}

// clineSubmit types prompt in Cline's terminal interface and sends it.
// The input echoes keys before the interface has taken the text in, and
// Enter in between finds no text and is lost without a word. " /" after
// the prompt opens the command menu once the interface has taken it in;
// Backspace closes the menu once the interface has the prompt without
// the slash, and Enter then sends it (trimmed of the space left). Enter
// goes apart from the text, which in the same burst would be a pasted
// newline.
func clineSubmit(t *testing.T, term *termtest.Term, prompt string) {
	t.Helper()
	const menu = "Modify agent configuration" // the first command's line
	term.Send(prompt + " /")
	term.WaitForScreen(t, menu, time.Minute)
	term.Send("\x7f")
	term.WaitOffScreen(t, menu, time.Minute)
	term.Send("\r")
}

// clineSession is the id of the session Cline started with prompt.
func clineSession(t *testing.T, home, prompt string) string {
	t.Helper()
	records, _ := filepath.Glob(filepath.Join(home, ".cline", "data", "sessions", "*", "*.json"))
	for _, r := range records {
		if strings.HasSuffix(r, ".messages.json") {
			continue
		}
		var rec struct {
			SessionID string `json:"session_id"`
			Prompt    string `json:"prompt"`
		}
		data, err := os.ReadFile(r)
		if err == nil && json.Unmarshal(data, &rec) == nil && rec.Prompt == prompt {
			return rec.SessionID
		}
	}
	t.Fatalf("no Cline session started with %q among %v", prompt, records)
	return ""
}

// stopClineHub stops the hub daemon a cline run left behind, named in
// its data directory.
func stopClineHub(t *testing.T, home string) {
	data, err := os.ReadFile(filepath.Join(home, ".cline", "data", "locks", "hub", "production.json"))
	if err != nil {
		return
	}
	var hub struct {
		PID int `json:"pid"`
	}
	if json.Unmarshal(data, &hub) != nil || hub.PID <= 1 {
		return
	}
	if p, err := os.FindProcess(hub.PID); err == nil {
		if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Logf("stopping Cline's hub daemon %d: %v", hub.PID, err)
		}
	}
}
