package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/importer/claudecode"
	codexim "github.com/loomhq/loom/importer/codex"
	geminiim "github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/internal/agentclitest"
	"github.com/loomhq/loom/providertest"
)

// The flows every real agent is run through in the tests of this file
// (TestImportRealClaudeCode, TestImportRealCodex, TestImportRealGemini):
// each agent, installed from npm and run offline against a fake model
// that answers by what each request ends with, writes its own session
// files in a temporary HOME; `loom session import --from TOOL` then has
// to hold every prompt, reply, reasoning part and tool call once, the
// sub-agent linked by an agent part and starting with its task, the
// summary and compaction count, and the usage the fake model reported.

// flowWant is what one session an agent wrote must be once imported.
type flowWant struct {
	flow      string
	prompts   []string // the user's prompts, in order
	replies   []string // the assistant's text, in order
	reasoning []string
	tools     []toolWant
	summaries int // summary messages, and usage.compactions
	// usage is what the fake model reported for the session's calls
	// (input without cached tokens, output with reasoning); nil is not
	// checked.
	usage *loom.Usage
	// sub is the sub-agent the session ran: linked by an agent part,
	// its first prompt is its task.
	sub *flowWant
}

// toolWant is a tool call: its name and a piece of its result.
type toolWant struct{ name, result string }

// rule answers a request of the fake model whose last message holds
// when (once), with what reply makes of that message.
type rule[R any] struct {
	when  string
	reply func(last string) R
	used  bool
}

// script is the fake model's rules, tried in order.
type script[R any] struct {
	mu    sync.Mutex
	rules []*rule[R]
	// last is the text of a request's last message (or input item).
	last func(providertest.Request) string
}

func (s *script[R]) on(when string, reply func(last string) R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, &rule[R]{when: when, reply: reply})
}

func (s *script[R]) answer(r R) func(string) R { return func(string) R { return r } }

func (s *script[R]) respond(req providertest.Request) (R, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := s.last(req)
	for _, r := range s.rules {
		if !r.used && strings.Contains(last, r.when) {
			r.used = true
			return r.reply(last), true
		}
	}
	var zero R
	return zero, false
}

// lastJSON is the JSON of the last element of the array body[key].
func lastJSON(req providertest.Request, key string) string {
	arr, _ := req.Body[key].([]any)
	if len(arr) == 0 {
		return ""
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(arr[len(arr)-1])
	return b.String()
}

// runAgent runs an agent like agentclitest.Run, with stdin as its input.
func runAgent(t *testing.T, dir string, env []string, stdin, bin string, args ...string) string {
	t.Helper()
	return runAgentWithin(t, cliTimeout, dir, env, stdin, bin, args...)
}

// runAgentWithin is runAgent for an agent that may take longer than
// cliTimeout: timeout.
func runAgentWithin(t *testing.T, timeout time.Duration, dir string, env []string, stdin, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil || ctx.Err() != nil {
		t.Fatalf("%s %s: %v:\n%s", filepath.Base(bin), strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// checkImportedFlows imports tool's sessions from the fixture's HOME and
// checks each flow's session against want, found by its first prompt.
func checkImportedFlows(t *testing.T, fx *fixture, tool string, wants []*flowWant) {
	t.Helper()
	start := time.Now()
	rep := importReport(t, fx.mustExec(t, "session", "import", "--from", tool, "--json"))
	tr := toolReport(t, rep, tool)
	t.Logf("import: %d files, %d sessions, %d messages in %s; skipped %v", tr.FilesRead, tr.SessionsNew, tr.MessagesAdded, time.Since(start).Round(time.Millisecond), tr.Skipped)
	if tr.FilesFailed != 0 || len(tr.Problems) != 0 {
		t.Errorf("import problems: %+v", tr.Problems)
	}
	listed := decodeJSON[[]*loom.Session](t, fx.mustExec(t, "session", "list", "-a", "--surface", tool, "--json", "--limit", "1000"))
	byID := map[string]*loom.Session{}
	for _, s := range listed {
		byID[s.ID] = s
	}
	shown := map[string][]*loom.Message{}
	messages := func(id string) []*loom.Message {
		if _, ok := shown[id]; !ok {
			shown[id] = fx.showMessages(t, id)
		}
		return shown[id]
	}
	for _, w := range wants {
		var found *loom.Session
		for _, s := range listed {
			if s.Kind == loom.KindSubagent {
				continue
			}
			if p := prompts(messages(s.ID)); len(p) > 0 && p[0] == w.prompts[0] {
				if found != nil {
					t.Errorf("%s: two sessions start with %q: %s and %s", w.flow, w.prompts[0], found.Key, s.Key)
				}
				found = s
			}
		}
		if found == nil {
			t.Errorf("%s: no imported session starts with %q", w.flow, w.prompts[0])
			continue
		}
		checkFlow(t, w, found, messages(found.ID), byID, messages)
	}
}

func prompts(msgs []*loom.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == loom.RoleUser {
			if s := strings.TrimSpace(m.Text()); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func checkFlow(t *testing.T, w *flowWant, s *loom.Session, msgs []*loom.Message, byID map[string]*loom.Session, messages func(string) []*loom.Message) {
	t.Helper()
	var replies, reasoning []string
	var tools []loom.Part
	var agents []loom.Part
	summaries := 0
	for _, m := range msgs {
		if m.Role == loom.RoleSummary {
			summaries++
		}
		for _, p := range m.Parts {
			switch {
			case p.Type == loom.PartText && m.Role == loom.RoleAssistant && strings.TrimSpace(p.Text) != "":
				replies = append(replies, strings.TrimSpace(p.Text))
			case p.Type == loom.PartReasoning:
				reasoning = append(reasoning, strings.TrimSpace(p.Text))
			case p.Type == loom.PartTool:
				tools = append(tools, p)
			case p.Type == loom.PartAgent:
				agents = append(agents, p)
			}
		}
	}
	if got := prompts(msgs); !slices.Equal(got, w.prompts) {
		t.Errorf("%s (%s): prompts %q, want %q", w.flow, s.Key, got, w.prompts)
	}
	if !slices.Equal(replies, w.replies) {
		t.Errorf("%s (%s): replies %q, want %q", w.flow, s.Key, replies, w.replies)
	}
	if !slices.Equal(reasoning, w.reasoning) {
		t.Errorf("%s (%s): reasoning %q, want %q", w.flow, s.Key, reasoning, w.reasoning)
	}
	if len(tools) != len(w.tools) {
		var names []string
		for _, p := range tools {
			names = append(names, p.Name)
		}
		t.Errorf("%s (%s): %d tool parts %q, want %d", w.flow, s.Key, len(tools), names, len(w.tools))
	}
	for i, tw := range w.tools {
		if i >= len(tools) {
			break
		}
		p := tools[i]
		if p.Name != tw.name || p.Status != loom.ToolCompleted || !strings.Contains(string(p.Output), tw.result) {
			t.Errorf("%s (%s): tool part %d is %s %s with %.200s (error %q), want %s completed with %q", w.flow, s.Key, i, p.Name, p.Status, p.Output, p.Error, tw.name, tw.result)
		}
	}
	if summaries != w.summaries || s.Usage.Compactions != int64(w.summaries) {
		t.Errorf("%s (%s): %d summary messages, usage.compactions %d; want %d", w.flow, s.Key, summaries, s.Usage.Compactions, w.summaries)
	}
	if w.usage != nil {
		got := loom.Usage{InputTokens: s.Usage.InputTokens, OutputTokens: s.Usage.OutputTokens, ReasoningTokens: s.Usage.ReasoningTokens, CacheReadTokens: s.Usage.CacheReadTokens}
		if got != *w.usage {
			t.Errorf("%s (%s): usage %+v, want %+v", w.flow, s.Key, got, *w.usage)
		}
	}
	if w.sub == nil {
		if len(agents) != 0 {
			t.Errorf("%s (%s): %d agent parts, want none", w.flow, s.Key, len(agents))
		}
		return
	}
	if len(agents) != 1 {
		t.Errorf("%s (%s): %d agent parts, want 1", w.flow, s.Key, len(agents))
		return
	}
	child := byID[agents[0].SessionID]
	if child == nil || child.Kind != loom.KindSubagent || child.ParentID != s.ID {
		t.Errorf("%s (%s): the agent part names %q, which is %+v; want a subagent of the session", w.flow, s.Key, agents[0].SessionID, child)
		return
	}
	checkFlow(t, w.sub, child, messages(child.ID), byID, messages)
}

// checkWatched starts `loom session import --from tool --watch`, runs
// grow (a run of the agent that appends a turn, or writes a session,
// whose reply says reply) once the first report is in, and checks that
// the watch imports the two messages within a second of the run's end.
func checkWatched(t *testing.T, fx *fixture, tool string, grow func(), reply string) {
	t.Helper()
	reports := fx.watchImports(t, tool)
	if rep, ok := <-reports; !ok {
		t.Fatal("--watch printed no first report")
	} else if tr := toolReport(t, rep, tool); tr.MessagesAdded != 0 {
		t.Errorf("--watch's first run added %d messages", tr.MessagesAdded)
	}
	grow()
	written := time.Now()
	for added := 0; added < 2; {
		rep, ok := <-reports
		if !ok {
			t.Fatal("--watch ended")
		}
		added += toolReport(t, rep, tool).MessagesAdded
	}
	t.Logf("--watch imported the new turn %s after the agent exited", time.Since(written).Round(time.Millisecond))
	if d := time.Since(written); d > time.Second {
		t.Errorf("--watch imported the new turn %s after the agent exited, want within a second", d)
	}
	// A program that stores the reply's message before its text (opencode
	// and Kilo write a part as it streams) has it searchable at a later
	// run of the watch: wait for the runs, not the clock.
	st := fx.openStore(t)
	deadline := time.After(time.Minute)
	for {
		hits, err := st.Search(t.Context(), loom.SearchQuery{Text: reply, UserID: "local", Exact: true})
		if err == nil && len(hits) == 1 {
			return
		}
		select {
		case _, ok := <-reports:
			if ok {
				continue
			}
		case <-deadline:
		}
		t.Errorf("the watched turn's reply: hits %v, err %v", hits, err)
		return
	}
}

// sessionIDIn is the first UUID in an agent's output after label.
func sessionIDIn(t *testing.T, out, label string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(label) + `\s*([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q and session id in:\n%s", label, out)
	}
	return m[1]
}

// keepAgentHome copies the HOME the agents wrote to
// $LOOM_KEEP_AGENT_HOME when it is set: their files, to look at.
func keepAgentHome(fx *fixture) {
	if d := os.Getenv("LOOM_KEEP_AGENT_HOME"); d != "" {
		exec.Command("cp", "-a", fx.home, d).Run()
	}
}

// checkReimportAndWatch checks that a second import of tool adds
// nothing, then that `--watch` imports, within a second of its writing,
// the turn (a prompt and the reply answer) that write appends to one of
// the tool's sessions.
func checkReimportAndWatch(t *testing.T, fx *fixture, tool, answer string, write func()) {
	t.Helper()
	rep := importReport(t, fx.mustExec(t, "session", "import", "--from", tool, "--json"))
	if tr := toolReport(t, rep, tool); tr.MessagesAdded != 0 || tr.SessionsNew != 0 || tr.SessionsGrown != 0 {
		t.Errorf("second import: %+v", tr)
	}
	checkWatched(t, fx, tool, write, answer)
}

func usageOf(input, cached, output, reasoning int64) *loom.Usage {
	return &loom.Usage{InputTokens: input, CacheReadTokens: cached, OutputTokens: output, ReasoningTokens: reasoning}
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImportRealClaudeCode: Claude Code (`claude -p`) writes a plain
// session, a two-turn one (two prompts on stream-json input), a tool call
// with thinking, a sub-agent (the Agent tool, run in the background as
// 2.1 does) followed by `/compact` and a turn after it, and a resume of
// the first session by its id; each imports faithfully.
func TestImportRealClaudeCode(t *testing.T) {
	if onPostgres() {
		t.Skip("runs the real agents once, on the SQLite pass")
	}
	t.Parallel()
	bin := agentclitest.Install(t, agentclitest.ClaudeCode)
	started := time.Now()
	fx := newEmptyFixture(t)
	dir := filepath.Join(fx.home, "work")
	mustWrite(t, filepath.Join(dir, "notes.txt"), "alpha\nbeta\n")
	srv := anthropictest.NewServer()
	t.Cleanup(srv.Close)
	sc := &script[anthropictest.Reply]{last: func(r providertest.Request) string { return lastJSON(r, "messages") }}
	srv.Respond(sc.respond)
	env := agentclitest.Env(fx.home, "ANTHROPIC_BASE_URL="+srv.BaseURL(), "ANTHROPIC_API_KEY=sk-ant-fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1")
	// Claude Code asks for thinking on every call: each reply thinks.
	say := func(think, text string, in, out int64, calls ...anthropictest.ToolCall) func(string) anthropictest.Reply {
		return sc.answer(anthropictest.Reply{Reasoning: think, Text: text, ToolCalls: calls, Usage: &anthropictest.Usage{InputTokens: in, OutputTokens: out}})
	}
	claude := func(sid string, resume bool, prompt string) string {
		flag := "--session-id"
		if resume {
			flag = "--resume"
		}
		return agentclitest.Run(t, cliTimeout, dir, env, bin, "-p", flag, sid, "--model", "claude-sonnet-4-5",
			"--allowedTools", "Read,Agent", "--", prompt)
	}
	ids := []string{"c1a0e5c0-0000-4000-8000-000000000001", "c1a0e5c0-0000-4000-8000-000000000002",
		"c1a0e5c0-0000-4000-8000-000000000003", "c1a0e5c0-0000-4000-8000-000000000004"}

	plain := &flowWant{flow: "plain", prompts: []string{"Say hello in one line."}, replies: []string{"Hello there."},
		reasoning: []string{"A greeting."}, usage: usageOf(1000, 0, 5, 0)}
	sc.on("Say hello in one line.", say("A greeting.", "Hello there.", 1000, 5))
	claude(ids[0], false, plain.prompts[0])

	multi := &flowWant{flow: "multi-turn", prompts: []string{"First question of two?", "Second question of two?"},
		replies: []string{"First answer.", "Second answer."}, reasoning: []string{"First thought.", "Second thought."},
		usage: usageOf(1100+1200, 0, 6+7, 0)}
	sc.on("First question of two?", say("First thought.", "First answer.", 1100, 6))
	sc.on("Second question of two?", say("Second thought.", "Second answer.", 1200, 7))
	var input strings.Builder
	for _, p := range multi.prompts {
		line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": p}})
		input.Write(append(line, '\n'))
	}
	runAgent(t, dir, env, input.String(), bin, "-p", "--session-id", ids[1], "--model", "claude-sonnet-4-5",
		"--input-format", "stream-json", "--output-format", "stream-json", "--verbose")

	tools := &flowWant{flow: "tools and thinking", prompts: []string{"What is in notes.txt?"},
		replies: []string{"I will read it.", "It says alpha and beta."}, reasoning: []string{"The user wants the file.", "Both lines are read."},
		tools: []toolWant{{"Read", "alpha"}}, usage: usageOf(1300+1400, 0, 20+9, 0)}
	sc.on("What is in notes.txt?", say("The user wants the file.", "I will read it.", 1300, 20,
		anthropictest.ToolCall{Name: "Read", Args: `{"file_path":"` + filepath.Join(dir, "notes.txt") + `"}`}))
	sc.on("beta", say("Both lines are read.", "It says alpha and beta.", 1400, 9))
	claude(ids[2], false, tools.prompts[0])

	// The sub-agent runs in the background: the parent's turn goes on
	// (the Agent call's result says it was launched) and Claude Code
	// tells it the result when the sub-agent ends.
	task := "Count the files in the work directory."
	sub := &flowWant{flow: "sub-agent", prompts: []string{"Delegate the count of files.", "After compaction?"},
		replies:   []string{"Delegating.", "Waiting for the count.", "The sub-agent counted one file.", "Still here after the summary."},
		reasoning: []string{"Delegate it.", "Wait for it.", "It is done.", "Carry on."},
		tools:     []toolWant{{"Agent", "Async agent launched"}}, summaries: 1,
		// The /compact call's usage (1900 in, 30 out) is written in no
		// message: it is what Claude Code's cost-state totals grew by.
		usage: usageOf(1500+1600+1700+1900+2000, 0, 10+4+8+30+6, 0),
		sub: &flowWant{flow: "sub-agent's session", prompts: []string{task}, replies: []string{"There is one file."},
			reasoning: []string{"Count them."}, usage: usageOf(1800, 0, 5, 0)}}
	sc.on("Delegate the count of files.", say("Delegate it.", "Delegating.", 1500, 10,
		anthropictest.ToolCall{Name: "Agent", Args: `{"description":"Count the files","prompt":"` + task + `","subagent_type":"general-purpose"}`}))
	sc.on(task, say("Count them.", "There is one file.", 1800, 5))
	sc.on("tool_result", say("Wait for it.", "Waiting for the count.", 1600, 4))
	sc.on("<task-notification>", say("It is done.", "The sub-agent counted one file.", 1700, 8))
	sc.on("<summary> block", sc.answer(anthropictest.Reply{Text: "<analysis>Counted.</analysis>\n<summary>The user had a sub-agent count the files: one.</summary>",
		Usage: &anthropictest.Usage{InputTokens: 1900, OutputTokens: 30}}))
	sc.on("After compaction?", say("Carry on.", "Still here after the summary.", 2000, 6))
	claude(ids[3], false, sub.prompts[0])
	// "/compact" ran in Claude Code only: a system message, no prompt.
	claude(ids[3], true, "/compact")
	claude(ids[3], true, "After compaction?")

	// Resume the first session by its id, after others were written.
	plain.prompts = append(plain.prompts, "One more on the greeting?")
	plain.replies = append(plain.replies, "Resumed and answering.")
	plain.reasoning = append(plain.reasoning, "Resumed.")
	plain.usage.InputTokens += 2100
	plain.usage.OutputTokens += 4
	sc.on("One more on the greeting?", say("Resumed.", "Resumed and answering.", 2100, 4))
	claude(ids[0], true, "One more on the greeting?")
	t.Logf("claude-code ran %d model calls in %s", len(srv.Requests()), time.Since(started).Round(time.Millisecond))

	keepAgentHome(fx)
	checkImportedFlows(t, fx, claudecode.Tool, []*flowWant{plain, multi, tools, sub})
}

// TestImportRealCodex: Codex CLI (`codex exec`, one prompt a process)
// writes a plain session, a two-turn one (`exec resume`), a shell call
// with reasoning, a sub-agent (multi_agent_v1's spawn_agent and
// wait_agent), an automatic compaction (over
// model_auto_compact_token_limit) and a resume of the first session by
// its id; each imports faithfully.
func TestImportRealCodex(t *testing.T) {
	if onPostgres() {
		t.Skip("runs the real agents once, on the SQLite pass")
	}
	t.Parallel()
	started := time.Now()
	fx := newEmptyFixture(t)
	bin, dir, env, srv, sc := startCodex(t, fx)
	say := func(think, text string, u agentclitest.Usage, calls ...providertest.ToolCall) func(string) agentclitest.Turn {
		return sc.answer(agentclitest.Turn{Reasoning: think, Text: text, Calls: calls, Usage: u})
	}
	codex := func(resume, prompt string) string {
		args := []string{"exec", "--skip-git-repo-check", "-s", "danger-full-access"}
		if resume != "" {
			args = append(args, "resume", resume)
		}
		return sessionIDIn(t, agentclitest.Run(t, cliTimeout, dir, env, bin, append(args, prompt)...), "session id:")
	}
	usage := func(in, cached, out, reasoning int64) agentclitest.Usage {
		return agentclitest.Usage{Input: in, Cached: cached, Output: out, Reasoning: reasoning}
	}

	plain := &flowWant{flow: "plain", prompts: []string{"Say hello in one line."}, replies: []string{"Hello there."},
		reasoning: []string{"A greeting."}, usage: usageOf(800, 200, 15, 5)}
	sc.on("Say hello in one line.", say("A greeting.", "Hello there.", usage(1000, 200, 15, 5)))
	first := codex("", plain.prompts[0])

	multi := &flowWant{flow: "multi-turn", prompts: []string{"First question of two?", "Second question of two?"},
		replies: []string{"First answer.", "Second answer."}, usage: usageOf(1100+1100, 100, 6+7, 0)}
	sc.on("First question of two?", say("", "First answer.", usage(1100, 0, 6, 0)))
	sc.on("Second question of two?", say("", "Second answer.", usage(1200, 100, 7, 0)))
	codex(codex("", multi.prompts[0]), multi.prompts[1])

	tools := &flowWant{flow: "tools and reasoning", prompts: []string{"What is in notes.txt?"},
		replies: []string{"It says alpha and beta."}, reasoning: []string{"The user wants the file.", "Both lines are read."},
		tools: []toolWant{{"exec_command", "beta"}}, usage: usageOf(1000+1400, 300, 40+9, 20+3)}
	sc.on("What is in notes.txt?", say("The user wants the file.", "", usage(1300, 300, 40, 20),
		providertest.ToolCall{Name: "exec_command", Args: `{"cmd":"cat notes.txt"}`}))
	sc.on("beta", say("Both lines are read.", "It says alpha and beta.", usage(1400, 0, 9, 3)))
	codex("", tools.prompts[0])

	task := "Count the files in the work directory."
	sub := &flowWant{flow: "sub-agent", prompts: []string{"Delegate the count of files."},
		replies: []string{"Delegating.", "Waiting for the count.", "The sub-agent counted one file."},
		tools:   []toolWant{{"multi_agent_v1.spawn_agent", "agent_id"}, {"multi_agent_v1.wait_agent", "There is one file."}},
		usage:   usageOf(1500+1600+1700, 0, 10+4+8, 0),
		sub: &flowWant{flow: "sub-agent's session", prompts: []string{task}, replies: []string{"There is one file."},
			usage: usageOf(1800, 0, 5, 0)}}
	sc.on("Delegate the count of files.", say("", "Delegating.", usage(1500, 0, 10, 0),
		providertest.ToolCall{Name: "multi_agent_v1.spawn_agent", Args: `{"message":"` + task + `"}`}))
	sc.on(task, say("", "There is one file.", usage(1800, 0, 5, 0)))
	sc.on("agent_id", func(last string) agentclitest.Turn {
		id := regexp.MustCompile(`agent_id\\?"\s*:\s*\\?"([^"\\]+)`).FindStringSubmatch(last)
		if id == nil {
			t.Errorf("spawn_agent's output names no agent_id: %s", last)
			return agentclitest.Turn{Text: "No agent."}
		}
		return agentclitest.Turn{Text: "Waiting for the count.", Usage: usage(1600, 0, 4, 0),
			Calls: []providertest.ToolCall{{Name: "multi_agent_v1.wait_agent", Args: `{"targets":["` + id[1] + `"]}`}}}
	})
	sc.on("There is one file.", say("", "The sub-agent counted one file.", usage(1700, 0, 8, 0)))
	codex("", sub.prompts[0])

	// A turn that reports more tokens than model_auto_compact_token_limit:
	// Codex compacts the history before the next turn.
	compact := &flowWant{flow: "compaction", prompts: []string{"Big turn.", "After the big turn?"},
		replies: []string{"A big answer.", "Still here after the summary."}, summaries: 1,
		usage: usageOf(6000+1900+2000, 0, 10+30+6, 0)}
	sc.on("Big turn.", say("", "A big answer.", usage(6000, 0, 10, 0)))
	sc.on("CONTEXT CHECKPOINT COMPACTION", say("", "Progress: one big answer was given.", usage(1900, 0, 30, 0)))
	sc.on("After the big turn?", say("", "Still here after the summary.", usage(2000, 0, 6, 0)))
	codex(codex("", compact.prompts[0]), compact.prompts[1])

	plain.prompts = append(plain.prompts, "One more on the greeting?")
	plain.replies = append(plain.replies, "Resumed and answering.")
	plain.usage.InputTokens += 2100
	plain.usage.OutputTokens += 4
	sc.on("One more on the greeting?", say("", "Resumed and answering.", usage(2100, 0, 4, 0)))
	codex(first, "One more on the greeting?")
	t.Logf("codex ran %d model calls in %s", len(srv.Requests()), time.Since(started).Round(time.Millisecond))

	keepAgentHome(fx)
	checkImportedFlows(t, fx, codexim.Tool, []*flowWant{plain, multi, tools, sub, compact})
}

// TestImportRealGemini: Gemini CLI (`gemini -p`, one prompt a process)
// writes a plain session, a two-turn one (`--resume latest`), a file
// read with thoughts, a sub-agent (invoke_agent running the generalist)
// and a resume of the first session by its id; each imports faithfully.
// Its compression is TestImportRealGeminiCompression's.
func TestImportRealGemini(t *testing.T) {
	if onPostgres() {
		t.Skip("runs the real agents once, on the SQLite pass")
	}
	t.Parallel()
	started := time.Now()
	g := startGemini(t, "")
	fx, dir, sc, srv, say, usage, gemini := g.fx, g.dir, g.sc, g.srv, g.say, g.usage, g.run

	plain := &flowWant{flow: "plain", prompts: []string{"Say hello in one line."}, replies: []string{"Hello there."},
		reasoning: []string{"A greeting."}, usage: usageOf(800, 200, 15, 5)}
	sc.on("Say hello in one line.", say("A greeting.", "Hello there.", usage(1000, 200, 15, 5)))
	first := gemini("", plain.prompts[0])

	multi := &flowWant{flow: "multi-turn", prompts: []string{"First question of two?", "Second question of two?"},
		replies: []string{"First answer.", "Second answer."}, reasoning: []string{"First thought.", "Second thought."},
		usage: usageOf(1100+1100, 100, 6+7, 2+3)}
	sc.on("First question of two?", say("First thought.", "First answer.", usage(1100, 0, 6, 2)))
	sc.on("Second question of two?", say("Second thought.", "Second answer.", usage(1200, 100, 7, 3)))
	// Gemini CLI 0.61 names a session's file by the minute it starts in;
	// a `--resume latest` run that starts in a later minute than the
	// session was seen to leave neither file of the session behind
	// (docs/import.md). The two runs take about two seconds on an idle
	// machine, 10–20 on a loaded one: they start early in a minute, and
	// when they still crossed into the next (what Gemini CLI does then
	// is not what this test checks) they run again, at most twice more.
	for attempt := 1; ; attempt++ {
		if s := time.Now().Second(); s >= 20 {
			time.Sleep(time.Duration(61-s) * time.Second)
		}
		minute := time.Now().Truncate(time.Minute)
		gemini("", multi.prompts[0])
		gemini("latest", multi.prompts[1])
		if time.Now().Truncate(time.Minute).Equal(minute) || attempt == 3 {
			break
		}
		t.Logf("multi-turn: the two runs crossed into the next minute; again")
	}

	tools := &flowWant{flow: "tools and thoughts", prompts: []string{"What is in notes.txt?"},
		replies: []string{"It says alpha and beta."}, reasoning: []string{"The user wants the file.", "Both lines are read."},
		tools: []toolWant{{"read_file", "beta"}}, usage: usageOf(1000+1400, 300, 40+9, 20+3)}
	sc.on("What is in notes.txt?", say("The user wants the file.", "", usage(1300, 300, 40, 20),
		providertest.ToolCall{Name: "read_file", Args: `{"file_path":"` + filepath.Join(dir, "notes.txt") + `"}`}))
	sc.on("beta", say("Both lines are read.", "It says alpha and beta.", usage(1400, 0, 9, 3)))
	gemini("", tools.prompts[0])

	task := "Count the files in the work directory."
	sub := &flowWant{flow: "sub-agent", prompts: []string{"Delegate the count of files."},
		replies: []string{"The sub-agent counted one file."}, reasoning: []string{"Delegate it.", "It is done."},
		tools: []toolWant{{"invoke_agent", "There is one file."}},
		usage: usageOf(1500+1700, 0, 10+8, 2+2),
		// The generalist ends by calling complete_task with its result.
		sub: &flowWant{flow: "sub-agent's session", prompts: []string{task}, replies: []string{"Counted."},
			reasoning: []string{"Count them."}, tools: []toolWant{{"complete_task", ""}}, usage: usageOf(1800, 0, 5, 1)}}
	sc.on("Delegate the count of files.", say("Delegate it.", "", usage(1500, 0, 10, 2),
		providertest.ToolCall{Name: "invoke_agent", Args: `{"agent_name":"generalist","prompt":"` + task + `"}`}))
	sc.on(task, say("Count them.", "Counted.", usage(1800, 0, 5, 1),
		providertest.ToolCall{Name: "complete_task", Args: `{"result":{"response":"There is one file."}}`}))
	sc.on("There is one file.", say("It is done.", "The sub-agent counted one file.", usage(1700, 0, 8, 2)))
	gemini("", sub.prompts[0])

	plain.prompts = append(plain.prompts, "One more on the greeting?")
	plain.replies = append(plain.replies, "Resumed and answering.")
	plain.reasoning = append(plain.reasoning, "Resumed.")
	plain.usage.InputTokens += 2100
	plain.usage.OutputTokens += 4
	plain.usage.ReasoningTokens += 1
	sc.on("One more on the greeting?", say("Resumed.", "Resumed and answering.", usage(2100, 0, 4, 1)))
	gemini(first, "One more on the greeting?")
	t.Logf("gemini ran %d model calls in %s", len(srv.Requests()), time.Since(started).Round(time.Millisecond))
	keepAgentHome(fx)
	checkImportedFlows(t, fx, geminiim.Tool, []*flowWant{plain, multi, tools, sub})
}

// startCodex installs Codex CLI and sets it up in fx's HOME to run
// against a scripted fake model, in a work directory holding notes.txt.
func startCodex(t *testing.T, fx *fixture) (bin, dir string, env []string, srv *agentclitest.Scripted, sc *script[agentclitest.Turn]) {
	t.Helper()
	bin = agentclitest.Install(t, agentclitest.Codex)
	dir = filepath.Join(fx.home, "work")
	mustWrite(t, filepath.Join(dir, "notes.txt"), "alpha\nbeta\n")
	srv = agentclitest.NewScriptedResponses()
	t.Cleanup(srv.Close)
	sc = &script[agentclitest.Turn]{last: func(r providertest.Request) string { return lastJSON(r, "input") }}
	srv.Respond(sc.respond)
	codexHome := filepath.Join(fx.home, ".codex")
	writeSettings(t, filepath.Join(codexHome, "config.toml"), strings.Join([]string{
		`model = "gpt-fake"`, `model_provider = "fake"`, `model_auto_compact_token_limit = 5000`,
		`[model_providers.fake]`, `name = "fake"`, `base_url = "` + srv.URL + `/v1"`, `wire_api = "responses"`,
		`env_key = "FAKE_OPENAI_KEY"`, `request_max_retries = 0`, `stream_max_retries = 0`}, "\n"))
	env = agentclitest.Env(fx.home, "CODEX_HOME="+codexHome, "FAKE_OPENAI_KEY=sk-fake", "LOOM_HOME="+fx.home)
	return bin, dir, env, srv, sc
}
