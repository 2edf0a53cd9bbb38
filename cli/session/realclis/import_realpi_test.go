package realclis_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	piim "github.com/loomhq/loom/importer/pi"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/providertest"
)

// piRun is the real pi, installed, in a fixture's HOME whose
// ~/.pi/agent/models.json makes a fake model (OpenAI's Responses API,
// answering by the script sc) a custom provider, "fake".
type piRun struct {
	fx  *clitest.Fixture
	srv *agentclitest.Scripted
	sc  *clitest.Script[agentclitest.Turn]
	bin string
	env []string
}

// newPiRun installs pi and sets it up with settings as its
// ~/.pi/agent/settings.json; the test is skipped where pi cannot be
// installed.
func newPiRun(t *testing.T, settings string) *piRun {
	t.Helper()
	pr := &piRun{bin: agentclitest.Install(t, agentclitest.Pi), fx: clitest.NewEmptyFixture(t), srv: agentclitest.NewScriptedResponses()}
	t.Cleanup(pr.srv.Close)
	pr.sc = &clitest.Script[agentclitest.Turn]{Last: func(r providertest.Request) string { return clitest.LastJSON(r, "input") }}
	pr.srv.Respond(pr.sc.Respond)
	agent := filepath.Join(pr.fx.Home, ".pi", "agent")
	clitest.WriteSettings(t, filepath.Join(agent, "models.json"), `{"providers": {"fake": {
		"baseUrl": "`+pr.srv.URL+`/v1", "api": "openai-responses", "apiKey": "FAKE_OPENAI_KEY",
		"models": [{"id": "gpt-fake", "reasoning": true, "input": ["text"], "contextWindow": 200000, "maxTokens": 8000,
			"cost": {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 0}}]}}}`)
	clitest.WriteSettings(t, filepath.Join(agent, "settings.json"), settings)
	// Offline: no update check, no telemetry; nothing leaves 127.0.0.1.
	pr.env = agentclitest.Env(pr.fx.Home, "FAKE_OPENAI_KEY=sk-fake", "PI_OFFLINE=1", "PI_TELEMETRY=0")
	return pr
}

// args are pi's arguments for the fake model, then more.
func (pr *piRun) args(more ...string) []string {
	return append([]string{"--provider", "fake", "--model", "gpt-fake", "--offline"}, more...)
}

// TestImportRealPi: the Pi coding agent (`pi -p`, one prompt a process)
// writes a plain session, a turn more on it (`--continue`), and a file
// read with reasoning, against a fake model it reaches as a custom
// provider of ~/.pi/agent/models.json (OpenAI's Responses API); each
// imports faithfully, a second import adds nothing, `--watch` imports a
// turn a later `pi --continue` appends, and `pi --fork ID` is a fork of
// the session it copied.
func TestImportRealPi(t *testing.T) {
	clitest.RealAgentsOnce(t)
	started := time.Now()
	pr := newPiRun(t, `{}`)
	fx, sc, bin, env := pr.fx, pr.sc, pr.bin, pr.env
	dir := filepath.Join(fx.Home, "work")
	clitest.MustWrite(t, filepath.Join(dir, "notes.txt"), "alpha\nbeta\n")
	say := func(think, text string, u agentclitest.Usage, calls ...providertest.ToolCall) func(string) agentclitest.Turn {
		return sc.Answer(agentclitest.Turn{Reasoning: think, Text: text, Calls: calls, Usage: u})
	}
	pi := func(args ...string) string {
		return agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, pr.args(args...)...)
	}
	usage := func(in, cached, out, reasoning int64) agentclitest.Usage {
		return agentclitest.Usage{Input: in, Cached: cached, Output: out, Reasoning: reasoning}
	}

	plain := &flowWant{flow: "plain and continued", prompts: []string{"Say hello in one line.", "One more on the greeting?"},
		replies: []string{"Hello there.", "Continued and answering."}, reasoning: []string{"A greeting."},
		usage: usageOf(800+2100, 200, 15+4, 0)}
	sc.On("Say hello in one line.", say("A greeting.", "Hello there.", usage(1000, 200, 15, 5)))
	sc.On("One more on the greeting?", say("", "Continued and answering.", usage(2100, 0, 4, 0)))
	pi("-p", plain.prompts[0])
	pi("-p", "--continue", plain.prompts[1])

	tools := &flowWant{flow: "tools and reasoning", prompts: []string{"What is in notes.txt?"},
		replies: []string{"It says alpha and beta."}, reasoning: []string{"The user wants the file.", "Both lines are read."},
		tools: []toolWant{{"read", "beta"}}, usage: usageOf(1000+1400, 300, 40+9, 0)}
	sc.On("What is in notes.txt?", say("The user wants the file.", "", usage(1300, 300, 40, 20),
		providertest.ToolCall{Name: "read", Args: `{"path":"notes.txt"}`}))
	sc.On("beta", say("Both lines are read.", "It says alpha and beta.", usage(1400, 0, 9, 3)))
	// A session of its own: --no-session would not write one, so the
	// tools flow runs in another directory.
	other := filepath.Join(fx.Home, "other")
	clitest.MustWrite(t, filepath.Join(other, "notes.txt"), "alpha\nbeta\n")
	agentclitest.Run(t, clitest.CLITimeout, other, env, bin, pr.args("-p", tools.prompts[0])...)
	t.Logf("pi ran %d model calls in %s", len(pr.srv.Requests()), time.Since(started).Round(time.Millisecond))

	keepAgentHome(fx)
	checkImportedFlows(t, fx, piim.Tool, []*flowWant{plain, tools})
	checkFidelity(t, fx, piim.Tool, agentclitest.TurnAnswers(pr.srv.Answered()), agentclitest.Expect{})

	// A second import adds nothing; --watch imports a turn a later pi
	// run appends.
	sc.On("A third turn while watched?", say("", "Watched and answered.", usage(2500, 0, 3, 0)))
	checkReimportAndWatch(t, fx, piim.Tool, "Watched and answered", func() { pi("-p", "--continue", "A third turn while watched?") })

	// `pi --fork ID` copies a session into a new file that goes on on
	// its own: a fork of the session, at the turns it copied.
	files, _ := filepath.Glob(filepath.Join(fx.Home, ".pi", "agent", "sessions", "*-work--", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("pi's sessions in the work directory: %v", files)
	}
	_, firstID, _ := strings.Cut(strings.TrimSuffix(filepath.Base(files[0]), ".jsonl"), "_")
	sc.On("A forked question?", say("", "Answered in the fork.", usage(2600, 0, 5, 0)))
	pi("-p", "--fork", firstID, "A forked question?")
	fx.MustExec(t, "session", "import", "--from", piim.Tool)
	listed := clitest.DecodeJSON[[]*loom.Session](t, fx.MustExec(t, "session", "list", "-a", "--surface", piim.Tool, "--json"))
	var main, fork *loom.Session
	for _, s := range listed {
		switch s.Key {
		case piim.Tool + ":" + firstID:
			main = s
		default:
			if s.Kind == loom.KindFork {
				fork = s
			}
		}
	}
	if main == nil || fork == nil {
		t.Fatalf("no session %s and fork of it among %d", firstID, len(listed))
	}
	if fork.ParentID != main.ID || fork.ForkTurn != 3 {
		t.Errorf("the fork: parent %s (want %s), fork turn %d (want 3)", fork.ParentID, main.ID, fork.ForkTurn)
	}
	want := append(slices.Clone(plain.prompts), "A third turn while watched?", "A forked question?")
	if got := prompts(fx.ShowMessages(t, fork.ID)); !slices.Equal(got, want) {
		t.Errorf("the fork's prompts %q, want %q", got, want)
	}
}

// TestImportRealPiCompaction: pi's compaction (the compact command of
// `pi --mode rpc`, between two prompts) imports as a summary message
// between the turns, counted once, with every prompt and reply kept; a
// command the user ran (the bash command, pi's !) is a system message,
// and the session's name (set_session_name, pi's /name) its title.
func TestImportRealPiCompaction(t *testing.T) {
	clitest.RealAgentsOnce(t)
	// Keep no recent tokens: compact all there is.
	pr := newPiRun(t, `{"compaction": {"keepRecentTokens": 1}}`)
	fx, sc := pr.fx, pr.sc
	dir := filepath.Join(fx.Home, "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	say := func(text string, in, out int64) func(string) agentclitest.Turn {
		return sc.Answer(agentclitest.Turn{Text: text, Usage: agentclitest.Usage{Input: in, Output: out}})
	}
	flow := &flowWant{flow: "compaction", prompts: []string{"Before the compaction?", "After the compaction?"},
		replies: []string{"An answer to compact.", "Still here after the summary."}, summaries: 1,
		usage: usageOf(1000+1200, 0, 10+6, 0)}
	sc.On(flow.prompts[0], say(flow.replies[0], 1000, 10))
	// With no recent tokens kept, pi summarises what comes before its
	// cut, or the prefix of a turn it cuts inside (it keeps the reply).
	sc.On("conversation to summarize", say("One question was answered.", 900, 30))
	sc.On("PREFIX of a turn", say("One question was asked.", 900, 30))
	sc.On(flow.prompts[1], say(flow.replies[1], 1200, 6))

	ctx, cancel := context.WithTimeout(context.Background(), clitest.CLITimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, pr.bin, pr.args("--mode", "rpc")...)
	cmd.Dir, cmd.Env = dir, pr.env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	events := bufio.NewScanner(stdout)
	events.Buffer(nil, 16<<20)
	str := func(v any) string { s, _ := v.(string); return s }
	// send writes a command and waits for the event or response that
	// ends it.
	send := func(command, until string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(stdin, command+"\n"); err != nil {
			t.Fatalf("%s: %v", command, err)
		}
		for events.Scan() {
			var ev map[string]any
			if json.Unmarshal(events.Bytes(), &ev) != nil {
				continue
			}
			if ev["type"] == "response" && ev["success"] == false {
				t.Fatalf("%s: %s", command, events.Text())
			}
			if ev["type"] == until || (ev["type"] == "response" && "response:"+str(ev["command"]) == until) {
				return ev
			}
		}
		t.Fatalf("pi ended before %s answered %s: %v\n%s", command, until, events.Err(), stderr.String())
		return nil
	}
	prompt := func(text string) string {
		b, _ := json.Marshal(map[string]string{"type": "prompt", "message": text})
		return string(b)
	}
	send(prompt(flow.prompts[0]), "agent_end")
	send(`{"type":"bash","command":"echo from-the-user-shell"}`, "response:bash")
	send(`{"type":"set_session_name","name":"Compaction in pi"}`, "response:set_session_name")
	send(`{"type":"compact"}`, "response:compact")
	send(prompt(flow.prompts[1]), "agent_end")
	stdin.Close()
	if err := cmd.Wait(); err != nil && ctx.Err() != nil {
		t.Fatalf("pi --mode rpc: %v\n%s", err, stderr.String())
	}

	keepAgentHome(fx)
	checkImportedFlows(t, fx, piim.Tool, []*flowWant{flow})
	// pi's compaction entry holds the summary, not its call's usage.
	compacts := asks("conversation to summarize")
	checkFidelity(t, fx, piim.Tool, agentclitest.TurnAnswers(pr.srv.Answered()), agentclitest.Expect{Summary: compacts,
		NotRecorded: map[string]func(providertest.Request) bool{"pi's compaction call": compacts}})
	listed := clitest.DecodeJSON[[]*loom.Session](t, fx.MustExec(t, "session", "list", "-a", "--surface", piim.Tool, "--json"))
	if len(listed) != 1 || listed[0].Title != "Compaction in pi" {
		t.Fatalf("sessions %+v, want one titled %q", listed, "Compaction in pi")
	}
	var roles []string
	for _, m := range fx.ShowMessages(t, listed[0].ID) {
		roles = append(roles, m.Role)
		if m.Role == loom.RoleSummary && !strings.Contains(m.Text(), "One question was") {
			t.Errorf("the summary says %q", m.Text())
		}
		if m.Role == loom.RoleSystem && !strings.Contains(m.Text(), "$ echo from-the-user-shell\nfrom-the-user-shell") {
			t.Errorf("the system message says %q", m.Text())
		}
	}
	if want := []string{"user", "assistant", "system", "summary", "user", "assistant"}; !slices.Equal(roles, want) {
		t.Errorf("messages %v, want %v", roles, want)
	}
}
