package blame_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom/anthropic/anthropictest"
	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/fileedit"
	"github.com/loomhq/loom/internal/testkit/agentclitest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/gittest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/providertest"
)

// The ground truth of loom blame: real agent programs edit files of a
// git repository offline, against a fake model scripted to call their
// edit tools, across several sessions, with a human's edits, a moved
// function, a rename and commits in between; the test keeps, beside
// the files, who wrote each line (a ledger), imports the sessions with
// loom and compares loom blame's answer, line by line.

// plans are the tool calls the fake model makes for each prompt, by a
// token the prompt holds: the k-th answer after the prompt calls the
// k-th tool, the one after the last says it is done.
type plans struct {
	mu    sync.Mutex
	calls map[string][]providertest.ToolCall
}

// next is the answer to a request whose body is raw: results counts the
// tool results a request holds (each API marks them its own way).
func (p *plans) next(raw []byte, results *regexp.Regexp) (call *providertest.ToolCall, done string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := string(raw)
	best, at := "", -1
	for tok := range p.calls {
		if i := strings.LastIndex(s, tok); i > at {
			best, at = tok, i
		}
	}
	if at < 0 {
		return nil, "", false
	}
	k := len(results.FindAllStringIndex(s[at:], -1))
	calls := p.calls[best]
	if k < len(calls) {
		c := calls[k]
		return &c, "", true
	}
	return nil, "Done with " + best + ".", true
}

func (p *plans) add(token string, calls []providertest.ToolCall) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[token] = calls
}

// realAgent is one agent program in the scenario: its tool's name in
// loom, how it runs a prompt in a directory, and its edit tools' calls.
type realAgent struct {
	tool string
	// run runs prompt in dir as a new session.
	run func(t *testing.T, dir, prompt string)
	// write and edit are the calls of its tools that write a new file
	// and replace old by new in one; editFirst are calls it makes
	// before an edit (Claude Code reads a file before it edits it).
	write     func(path, content string) providertest.ToolCall
	edit      func(path, old, new string) providertest.ToolCall
	editFirst func(path string) []providertest.ToolCall
	// shell is a call of its shell tool that runs cmd in the session's
	// directory; nil for an agent the scenario does not run commands
	// of.
	shell func(cmd string) providertest.ToolCall
}

func args(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ledger is the files of the repository as the test knows them, each
// line with who wrote it: "agent", "mixed" (a human changed an agent's
// line) or "human".
type ledger struct {
	t     *testing.T
	dir   string
	files map[string][]tline
	// label is the path a file's lines are scored under when they are
	// not an agent's (a human's line loom took for an agent's): the path
	// of the first agent's line the file held, or one the scenario set
	// (a human's file beside an edit in another worktree); a file of no
	// label is one no session touched.
	label map[string]string
}

// tline is a line of a file, who wrote it, and for an agent's line the
// path its edit came by.
type tline struct{ text, who, path string }

// labelled sets rel's label when it has none.
func (l *ledger) labelled(rel, path string) {
	if l.label == nil {
		l.label = map[string]string{}
	}
	if l.label[rel] == "" {
		l.label[rel] = path
	}
}

func (l *ledger) text(rel string) string {
	var b strings.Builder
	for _, x := range l.files[rel] {
		b.WriteString(x.text + "\n")
	}
	return b.String()
}

// created records a new file.
func (l *ledger) created(rel, content, who string) {
	var ls []tline
	for _, s := range fileedit.Lines(content) {
		ls = append(ls, tline{s, who, ""})
	}
	l.files[rel] = ls
}

// replaced records old (whole lines) replaced by new in rel by who: new
// lines that are old ones stay whose they were; a human's line in the
// place of an agent's that is like it makes it mixed.
func (l *ledger) replaced(rel, old, new, who string) {
	l.t.Helper()
	cur := l.files[rel]
	ol, nl := fileedit.Lines(old), fileedit.Lines(new)
	at := -1
	for i := 0; i+len(ol) <= len(cur); i++ {
		ok := true
		for j := range ol {
			if cur[i+j].text != ol[j] {
				ok = false
				break
			}
		}
		if ok {
			at = i
			break
		}
	}
	if at < 0 {
		l.t.Fatalf("%s does not hold %q", rel, old)
	}
	m := fileedit.Match(ol, nl)
	var repl []tline
	for j, s := range nl {
		w, path := who, ""
		switch {
		case m[j] >= 0:
			w, path = cur[at+m[j]].who, cur[at+m[j]].path
		case who == "human" && j < len(ol) && m[j] < 0 && strings.HasPrefix(cur[at+j].who, "agent") && slices.Index(m, j) < 0:
			w = "mixed"
		}
		repl = append(repl, tline{s, w, path})
	}
	l.files[rel] = slices.Concat(cur[:at], repl, cur[at+len(ol):])
}

// check compares the files on disk with the ledger.
func (l *ledger) check(rel string) {
	l.t.Helper()
	b, err := os.ReadFile(filepath.Join(l.dir, rel))
	if err != nil {
		l.t.Fatal(err)
	}
	if string(b) != l.text(rel) {
		l.t.Fatalf("%s on disk is not what the agent was asked to make:\n%s\nwant:\n%s", rel, b, l.text(rel))
	}
}

// repoDir is the scenario's repository in the fixture's home (not yet
// a repository) and git run in it.
func repoDir(t *testing.T, fx *clitest.Fixture) (string, func(args ...string)) {
	dir := filepath.Join(fx.Home, "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir, func(args ...string) {
		t.Helper()
		gittest.Git(t, dir, time.Time{}, args...)
	}
}

// scenario runs the agent through three sessions in a repository, with
// a human's work between them, and scores loom blame against the
// ledger.
func scenario(t *testing.T, fx *clitest.Fixture, p *plans, a realAgent) {
	t.Helper()
	dir, git := repoDir(t, fx)
	led := &ledger{t: t, dir: dir, files: map[string][]tline{}}
	human := func(rel, old, new string) {
		t.Helper()
		led.replaced(rel, old, new, "human")
		clitest.MustWrite(t, filepath.Join(dir, rel), led.text(rel))
	}
	step := 0
	session := func(what string, label func(rel, text string) string, edits ...func() []providertest.ToolCall) {
		t.Helper()
		step++
		snap := led.snapshot()
		token := fmt.Sprintf("STEP-%d-%s", step, a.tool)
		var calls []providertest.ToolCall
		for _, e := range edits {
			calls = append(calls, e()...)
		}
		for i := range calls {
			calls[i].ID = fmt.Sprintf("call_%d_%d", step, i)
		}
		p.add(token, calls)
		a.run(t, dir, token+": "+what)
		want := led.files
		led.ran(snap, label)
		led.asked(want)
	}
	write := func(rel, content string) func() []providertest.ToolCall {
		return func() []providertest.ToolCall {
			led.created(rel, content, "agent")
			return []providertest.ToolCall{a.write(filepath.Join(dir, rel), content)}
		}
	}
	edit := func(rel, old, new string) func() []providertest.ToolCall {
		return func() []providertest.ToolCall {
			led.replaced(rel, old, new, "agent")
			var cs []providertest.ToolCall
			if a.editFirst != nil {
				cs = a.editFirst(filepath.Join(dir, rel))
			}
			return append(cs, a.edit(filepath.Join(dir, rel), old, new))
		}
	}

	clitest.MustWrite(t, filepath.Join(dir, "README.md"), "# Ledger\n\nA small ledger library.\n")
	led.created("README.md", "# Ledger\n\nA small ledger library.\n", "human")
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "start")

	// Session 1: two new files.
	session("write the ledger and its helpers", one("write"),
		write("src/ledger.py", ledgerPy), write("src/util.py", utilPy))
	led.check("src/ledger.py")
	led.check("src/util.py")
	git("add", "-A")
	git("commit", "-qm", "ledger")

	// A human writes a file like the agent's (the same imports, the same
	// field lines), committed alone: no session touched it.
	clitest.MustWrite(t, filepath.Join(dir, "src/report.py"), reportPy)
	led.created("src/report.py", reportPy, "human")
	git("add", "-A")
	git("commit", "-qm", "report")
	// A human's constant under the agent's: the human's, not mixed.
	human("src/ledger.py", "AUDIT_LIMIT = 10_000\n", "AUDIT_LIMIT = 10_000\nAUDIT_WINDOW_DAYS = 30\n")

	// A human changes one of the agent's lines and adds a function.
	human("src/ledger.py", "        return sum(e.amount for e in self.entries)\n", "        return round(sum(e.amount for e in self.entries), 2)\n")
	human("src/ledger.py", "    def __len__(self):\n", "    def __len__(self):  # entries\n")
	human("src/ledger.py", "    return ledger\n", "    return ledger\n\n\ndef audit(ledger):\n    \"\"\"Flag entries above the limit.\"\"\"\n    return [e for e in ledger.entries if e.amount > AUDIT_LIMIT]\n")

	// Session 2: an edit in each file.
	session("add transfers and a formatter", one("edit"),
		edit("src/ledger.py", "    def __len__(self):  # entries\n", "    def transfer(self, other, amount, memo=\"\"):\n        self.add(-amount, memo)\n        other.add(amount, memo)\n        return amount\n\n    def __len__(self):  # entries\n"),
		edit("src/util.py", "def cents(amount):\n    return int(round(amount * 100))\n", "def cents(amount):\n    \"\"\"Whole cents of an amount.\"\"\"\n    return int(round(amount * 100))\n\n\ndef fmt_money(amount, symbol=\"$\"):\n    return f\"{symbol}{amount:,.2f}\"\n"))
	led.check("src/ledger.py")
	led.check("src/util.py")
	git("add", "-A")
	git("commit", "-qm", "transfers")

	// The human renames util.py and moves load() from ledger.py to it.
	git("mv", "src/util.py", "src/money.py")
	led.files["src/money.py"] = led.files["src/util.py"]
	delete(led.files, "src/util.py")
	cur := led.files["src/ledger.py"]
	start := slices.IndexFunc(cur, func(x tline) bool { return x.text == "def load(path):" })
	// load() and the two blank lines after it: which two of the blank
	// lines around it go is the same text either way, and these keep
	// the ledger's record of who typed them true to what stays.
	end := slices.IndexFunc(cur, func(x tline) bool { return x.text == "    return ledger" }) + 3
	moved := slices.Clone(cur[start:end])
	led.files["src/ledger.py"] = slices.Concat(cur[:start], cur[end:])
	money := led.files["src/money.py"]
	at := slices.IndexFunc(money, func(x tline) bool { return x.text == "def from_cents(value):" })
	led.files["src/money.py"] = slices.Concat(money[:at], moved, money[at:])
	clitest.MustWrite(t, filepath.Join(dir, "src/ledger.py"), led.text("src/ledger.py"))
	clitest.MustWrite(t, filepath.Join(dir, "src/money.py"), led.text("src/money.py"))
	git("add", "-A")
	git("commit", "-qm", "move load to money")

	// Session 3b, for an agent whose commands the scenario runs: shell
	// edits — a here-document through tee with its output to /dev/null
	// after a cd, one after a command whose output goes to /dev/null,
	// and a sed -i of one of the agent's lines.
	if a.shell != nil {
		shellCall := func(cmd string, apply func()) func() []providertest.ToolCall {
			return func() []providertest.ToolCall {
				apply()
				return []providertest.ToolCall{a.shell(cmd)}
			}
		}
		session("write notes and a version, and divide by a float", byFile("shell", map[string]string{"src/money.py": "sed"}),
			shellCall("cd src && tee notes.txt <<'EOF' >/dev/null\nLedger notes for the next release.\nAmounts are kept in dollars, rounded to cents.\nEOF",
				func() { led.created("src/notes.txt", notesTxt, "agent") }),
			// An agent whose shell keeps its directory (Claude Code's) is
			// in src now: back to the top by its absolute path.
			shellCall("cd "+dir+" && echo writing >/dev/null && cat > src/version.py <<'EOF'\nVERSION = \"1.4.0\"\nRELEASE_NAME = \"ledger spring\"\nEOF",
				func() { led.created("src/version.py", versionPy, "agent") }),
			shellCall("sed -i 's/return value \\/ 100$/return value \\/ 100.0/' src/money.py",
				func() {
					cur := led.files["src/money.py"]
					i := slices.IndexFunc(cur, func(x tline) bool { return x.text == "    return value / 100" })
					cur[i] = tline{"    return value / 100.0", "agent", ""}
				}))
		for _, f := range []string{"src/notes.txt", "src/version.py", "src/money.py"} {
			led.check(f)
		}
		git("add", "-A")
		git("commit", "-qm", "notes and version")
	}

	// Session 3, not committed: an edit of the renamed file.
	session("parse amounts", one("edit"),
		edit("src/money.py", "def fmt_money(amount, symbol=\"$\"):\n", "def parse_money(text):\n    cleaned = text.replace(\"$\", \"\").replace(\",\", \"\")\n    return float(cleaned)\n\n\ndef fmt_money(amount, symbol=\"$\"):\n"))
	led.check("src/money.py")
	// The human re-indents nothing of the agent's but adds a comment.
	human("src/money.py", "def parse_money(text):\n", "# Parsing is lenient on purpose.\ndef parse_money(text):\n")

	fx.MustExec(t, "session", "import", "--from", a.tool)
	score(t, fx, dir, led, a.tool)
}

// score compares loom blame's answer with the ledger: each agent's
// line precision and recall (a line counts for the agent when loom
// names a session of it), and how mixed and human lines came out.
// Lines of whitespace alone are scored apart: which of the blank lines
// around a block moved or typed between others are whose is the same
// text either way, so no reader of the file can tell; they are
// reported, not held to the bounds.
func score(t *testing.T, fx *clitest.Fixture, dir string, led *ledger, tool string) {
	t.Helper()
	var tp, fp, fn, mixedRight, mixed, humanRight, humans, blankRight, blanks int
	var wrong []string
	for rel := range led.files {
		r := fx.RunWith(t, clitest.RunOpts{Dir: dir}, "blame", "--json", rel)
		if r.Code != 0 {
			t.Fatalf("loom blame %s: exit %d: %s", rel, r.Code, r.Stderr)
		}
		var res blame.Result
		if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
			t.Fatal(err)
		}
		want := led.files[rel]
		if len(res.Lines) != len(want) {
			t.Fatalf("%s: loom blame gives %d lines, the file has %d", rel, len(res.Lines), len(want))
		}
		if !slices.ContainsFunc(want, func(x tline) bool { return x.who != "human" }) {
			// A file no session wrote, edited or copied from has no
			// agent's line, blank ones included.
			stray := 0
			for _, l := range res.Lines {
				if l.Kind == blame.Agent || l.Kind == blame.Mixed {
					stray++
					t.Errorf("%s:%d %q is %s (%s): no session touched this file", rel, l.N, l.Text, l.Kind, l.Agent)
				}
			}
			if led.label[rel] == "" {
				untouchedFile(stray)
			}
		}
		for i, l := range res.Lines {
			w := want[i].who
			gotAgent := l.Kind == blame.Agent && l.Agent == tool
			if strings.TrimSpace(l.Text) == "" {
				blanks++
				if (w == "agent") == gotAgent {
					blankRight++
				}
				continue
			}
			// An agent's line counts for the path it came by, any other
			// for its file's.
			path := want[i].path
			if w != "agent" || path == "" {
				path = cmp.Or(led.label[rel], "untouched")
			}
			tally(t.Name(), tool+" "+path, w == "agent" && gotAgent, w != "agent" && gotAgent, w == "agent" && !gotAgent)
			switch {
			case w == "agent" && gotAgent:
				tp++
			case gotAgent:
				fp++
			case w == "agent":
				fn++
			}
			switch w {
			case "mixed":
				mixed++
				if l.Kind == blame.Mixed {
					mixedRight++
				}
			case "human":
				humans++
				if l.Kind == blame.Human {
					humanRight++
				}
			}
			if (w == "agent") != gotAgent || w == "mixed" && l.Kind != blame.Mixed || w == "human" && l.Kind != blame.Human {
				wrong = append(wrong, fmt.Sprintf("%s:%d %q: %s (%s), want %s", rel, l.N, l.Text, l.Kind, l.Agent, w))
			}
		}
	}
	precision := float64(tp) / float64(max(1, tp+fp))
	recall := float64(tp) / float64(max(1, tp+fn))
	t.Logf("%s: precision %.3f (%d/%d), recall %.3f (%d/%d); mixed %d/%d, human %d/%d; blank lines agreeing %d/%d", tool,
		precision, tp, tp+fp, recall, tp, tp+fn, mixedRight, mixed, humanRight, humans, blankRight, blanks)
	for _, w := range wrong {
		t.Log(w)
	}
	if tp+fn == 0 {
		t.Fatalf("%s: the ledger holds no agent's line", tool)
	}
	if precision < 0.99 || recall < 0.95 {
		t.Errorf("%s: precision %.3f, recall %.3f; want at least 0.99 and 0.95", tool, precision, recall)
	}
	if mixedRight != mixed {
		t.Errorf("%s: %d of %d lines a human changed are mixed", tool, mixedRight, mixed)
	}
}

const ledgerPy = `"""A ledger of entries."""

from dataclasses import dataclass, field

AUDIT_LIMIT = 10_000


@dataclass
class Entry:
    amount: float
    memo: str = ""


@dataclass
class Ledger:
    entries: list = field(default_factory=list)

    def add(self, amount, memo=""):
        self.entries.append(Entry(amount, memo))

    def balance(self):
        return sum(e.amount for e in self.entries)

    def __len__(self):
        return len(self.entries)


def load(path):
    ledger = Ledger()
    with open(path) as f:
        for line in f:
            amount, _, memo = line.partition(",")
            ledger.add(float(amount), memo.strip())
    return ledger
`

const reportPy = `"""A report of the ledger's entries."""

from dataclasses import dataclass, field


@dataclass
class Row:
    amount: float
    memo: str = ""


def rows(ledger):
    return [Row(e.amount, e.memo) for e in ledger.entries]
`

const notesTxt = "Ledger notes for the next release.\nAmounts are kept in dollars, rounded to cents.\n"

const versionPy = "VERSION = \"1.4.0\"\nRELEASE_NAME = \"ledger spring\"\n"

const utilPy = `"""Helpers for amounts."""


def cents(amount):
    return int(round(amount * 100))


def from_cents(value):
    return value / 100
`

// Result markers of each API: what a tool's result looks like in a
// request's body.
var (
	anthropicResults = regexp.MustCompile(`"type"\s*:\s*"tool_result"`)
	chatResults      = regexp.MustCompile(`"role"\s*:\s*"tool"`)
	responsesResults = regexp.MustCompile(`"type"\s*:\s*"(function_call_output|custom_tool_call_output)"`)
	geminiResults    = regexp.MustCompile(`"functionResponse"`)
)

func newPlans() *plans { return &plans{calls: map[string][]providertest.ToolCall{}} }

// answer is the reply of a fake model of any API to a request, by
// plans: a call or the text saying it is done; ok is false for a
// request of no plan (an agent's own side question).
func answer[R any](p *plans, r providertest.Request, results *regexp.Regexp, call func(providertest.ToolCall) R, text func(string) R) (R, bool) {
	c, done, ok := p.next(r.Raw, results)
	switch {
	case !ok:
		var zero R
		return zero, false
	case c != nil:
		return call(*c), true
	}
	return text(done), true
}

func turnCall(c providertest.ToolCall) agentclitest.Turn {
	return agentclitest.Turn{Calls: []providertest.ToolCall{c}}
}
func turnText(s string) agentclitest.Turn { return agentclitest.Turn{Text: s} }

// chatServer is a fake Chat Completions model answering by plans.
func chatServer(t *testing.T, p *plans) *openaitest.Server {
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	srv.Respond(func(r providertest.Request) (openaitest.Reply, bool) {
		if reply, ok := answer(p, r, chatResults, func(c providertest.ToolCall) openaitest.Reply {
			return openaitest.Reply{ToolCalls: []providertest.ToolCall{c}}
		}, func(s string) openaitest.Reply { return openaitest.Reply{Text: s} }); ok {
			return reply, true
		}
		return openaitest.Reply{Text: "A titled session"}, true
	})
	return srv
}

// responsesServer is a fake Responses API model answering by plans.
func responsesServer(t *testing.T, p *plans) *agentclitest.Scripted {
	srv := agentclitest.NewScriptedResponses()
	t.Cleanup(srv.Close)
	srv.Respond(func(r providertest.Request) (agentclitest.Turn, bool) {
		return answer(p, r, responsesResults, turnCall, turnText)
	})
	return srv
}

// filePathTools are the calls of agents whose tools take file_path,
// content, old_string and new_string (Claude Code's, Gemini CLI's and
// Qwen Code's): write, edit, and read (none when empty) before an edit.
func filePathTools(a realAgent, write, edit, read string, extra map[string]any) realAgent {
	a.write = func(path, content string) providertest.ToolCall {
		return providertest.ToolCall{Name: write, Args: args(map[string]any{"file_path": path, "content": content})}
	}
	a.edit = func(path, old, new string) providertest.ToolCall {
		in := map[string]any{"file_path": path, "old_string": old, "new_string": new}
		for k, v := range extra {
			in[k] = v
		}
		return providertest.ToolCall{Name: edit, Args: args(in)}
	}
	if read != "" {
		a.editFirst = func(path string) []providertest.ToolCall {
			return []providertest.ToolCall{{Name: read, Args: args(map[string]any{"file_path": path})}}
		}
	}
	return a
}

func TestBlameRealClaudeCode(t *testing.T) {
	clitest.RealAgentsOnce(t)
	fx, p, a := startClaudeCode(t)
	scenario(t, fx, p, a)
}

// startClaudeCode is the real Claude Code against a fake model that
// answers by the plans, as an agent of the scenarios.
func startClaudeCode(t *testing.T) (*clitest.Fixture, *plans, realAgent) {
	bin := agentclitest.Install(t, agentclitest.ClaudeCode)
	fx := clitest.NewEmptyFixture(t)
	p := newPlans()
	srv := anthropictest.NewServer()
	t.Cleanup(srv.Close)
	srv.Respond(func(r providertest.Request) (anthropictest.Reply, bool) {
		return answer(p, r, anthropicResults, func(c providertest.ToolCall) anthropictest.Reply {
			return anthropictest.Reply{ToolCalls: []providertest.ToolCall{c}}
		}, func(s string) anthropictest.Reply { return anthropictest.Reply{Text: s} })
	})
	env := agentclitest.Env(fx.Home, "ANTHROPIC_BASE_URL="+srv.BaseURL(), "ANTHROPIC_API_KEY=sk-ant-fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		// A hook loom hooks install wrote finds the fixture's store.
		"LOOM_HOME="+fx.Home)
	return fx, p, filePathTools(realAgent{
		tool: "claude-code",
		run: func(t *testing.T, dir, prompt string) {
			agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, "-p", "--model", "claude-sonnet-4-5", "--allowedTools", "Read,Write,Edit,Bash,NotebookEdit", "--", prompt)
		},
		shell: func(cmd string) providertest.ToolCall {
			return providertest.ToolCall{Name: "Bash", Args: args(map[string]any{"command": cmd, "description": "Run it"})}
		},
	}, "Write", "Edit", "Read", nil)
}

func TestBlameRealCodex(t *testing.T) {
	clitest.RealAgentsOnce(t)
	fx := clitest.NewEmptyFixture(t)
	p, run := startCodexShell(t, fx)
	scenario(t, fx, p, codexAgent(run, codexShellPatch, codexShell))
}

// startCodexShell is the real Codex against a fake model of its own
// provider that answers by plans, and how it runs a prompt in a
// directory.
func startCodexShell(t *testing.T, fx *clitest.Fixture) (*plans, func(t *testing.T, dir, prompt string)) {
	bin, _, env, srv, _ := clitest.StartCodex(t, fx)
	p := newPlans()
	srv.Respond(func(r providertest.Request) (agentclitest.Turn, bool) {
		return answer(p, r, responsesResults, turnCall, turnText)
	})
	return p, func(t *testing.T, dir, prompt string) {
		agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, "exec", "--skip-git-repo-check", "-s", "danger-full-access", prompt)
	}
}

// codexAgent is Codex as an agent of the scenarios: run runs it, patch
// is its call of apply_patch with a patch, shell its call of a command.
func codexAgent(run func(t *testing.T, dir, prompt string), patch, shell func(string) providertest.ToolCall) realAgent {
	return realAgent{
		tool:  "codex",
		run:   run,
		write: func(path, content string) providertest.ToolCall { return patch(addPatch(path, content)) },
		edit:  func(path, old, new string) providertest.ToolCall { return patch(updatePatch(path, old, new)) },
		shell: shell,
	}
}

// codexShell is Codex's call of a command of its shell tool.
func codexShell(cmd string) providertest.ToolCall {
	return providertest.ToolCall{Name: "exec_command", Args: args(map[string]any{"cmd": cmd})}
}

// codexShellPatch is apply_patch run as a command of Codex's shell tool
// (what it offers a model of its own provider).
func codexShellPatch(patch string) providertest.ToolCall {
	return codexShell("apply_patch <<'EOF'\n" + patch + "EOF\n")
}

// TestBlameRealCodexCodeMode: Codex in its default mode (0.171's
// default model runs in code mode) edits only through exec, a
// JavaScript script whose calls of tools.apply_patch and
// tools.exec_command make the changes.
func TestBlameRealCodexCodeMode(t *testing.T) {
	clitest.RealAgentsOnce(t)
	fx := clitest.NewEmptyFixture(t)
	p, run := startCodexModel(t, fx, agentclitest.CodexCodeMode, "")
	scenario(t, fx, p, codexAgent(run, codeModePatch, codeModeShell))
}

func TestBlameRealGemini(t *testing.T) {
	clitest.RealAgentsOnce(t)
	fx, p, a := startGemini(t)
	scenario(t, fx, p, a)
}

// startGemini is the real Gemini CLI against a fake model that answers
// by plans, as an agent of the scenarios.
func startGemini(t *testing.T) (*clitest.Fixture, *plans, realAgent) {
	g := clitest.StartGemini(t, "")
	p := geminiPlans(g.Srv)
	return g.Fx, p, filePathTools(realAgent{
		tool: "gemini",
		run: func(t *testing.T, dir, prompt string) {
			g.Dir = dir
			g.Run("", prompt)
		},
		shell: func(cmd string) providertest.ToolCall {
			return providertest.ToolCall{Name: "run_shell_command", Args: args(map[string]any{"command": cmd, "description": "Run it"})}
		},
	}, "write_file", "replace", "", map[string]any{"instruction": "Make the change asked for."})
}

// geminiPlans makes the fake Gemini model srv answer by plans.
func geminiPlans(srv *agentclitest.Scripted) *plans {
	p := newPlans()
	srv.Respond(func(r providertest.Request) (agentclitest.Turn, bool) {
		return answer(p, r, geminiResults, turnCall, turnText)
	})
	return p
}

func TestBlameRealQwen(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.Qwen)
	fx := clitest.NewEmptyFixture(t)
	p := newPlans()
	srv := chatServer(t, p)
	clitest.WriteSettings(t, filepath.Join(fx.Home, ".qwen", "settings.json"),
		`{"memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false}, "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}}`)
	env := agentclitest.WithNode(t, agentclitest.Env(fx.Home, "OPENAI_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=sk-fake", "OPENAI_MODEL=gpt-fake",
		"QWEN_CODE_SUPPRESS_YOLO_WARNING=1"))
	scenario(t, fx, p, filePathTools(realAgent{
		tool: "qwen",
		run: func(t *testing.T, dir, prompt string) {
			agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, "--auth-type", "openai", "--yolo", prompt)
		},
	}, "write_file", "edit", "read_file", nil))
}

func TestBlameRealPi(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.Pi)
	fx := clitest.NewEmptyFixture(t)
	p := newPlans()
	srv := responsesServer(t, p)
	agent := filepath.Join(fx.Home, ".pi", "agent")
	clitest.WriteSettings(t, filepath.Join(agent, "models.json"), `{"providers": {"fake": {
		"baseUrl": "`+srv.URL+`/v1", "api": "openai-responses", "apiKey": "FAKE_OPENAI_KEY",
		"models": [{"id": "gpt-fake", "reasoning": true, "input": ["text"], "contextWindow": 200000, "maxTokens": 8000,
			"cost": {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 0}}]}}}`)
	clitest.WriteSettings(t, filepath.Join(agent, "settings.json"), `{}`)
	env := agentclitest.Env(fx.Home, "FAKE_OPENAI_KEY=sk-fake", "PI_OFFLINE=1", "PI_TELEMETRY=0")
	scenario(t, fx, p, realAgent{
		tool: "pi",
		run: func(t *testing.T, dir, prompt string) {
			agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, "--provider", "fake", "--model", "gpt-fake", "--offline", "-p", prompt)
		},
		write: func(path, content string) providertest.ToolCall {
			return providertest.ToolCall{Name: "write", Args: args(map[string]any{"path": path, "content": content})}
		},
		edit: func(path, old, new string) providertest.ToolCall {
			return providertest.ToolCall{Name: "edit", Args: args(map[string]any{"path": path, "edits": []any{map[string]any{"oldText": old, "newText": new}}})}
		},
	})
}

func TestBlameRealCopilot(t *testing.T) {
	clitest.RealAgentsOnce(t)
	bin := agentclitest.Install(t, agentclitest.Copilot)
	fx := clitest.NewEmptyFixture(t)
	p := newPlans()
	srv := chatServer(t, p)
	env := agentclitest.Env(fx.Home, "COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false",
		"COPILOT_PROVIDER_BASE_URL="+srv.BaseURL(), "COPILOT_PROVIDER_API_KEY=sk-fake", "COPILOT_MODEL=gpt-fake")
	// Copilot CLI offers a model of its own provider apply_patch as a
	// freeform tool: the patch is the call's whole input.
	scenario(t, fx, p, realAgent{
		tool: "copilot",
		run: func(t *testing.T, dir, prompt string) {
			agentclitest.Run(t, clitest.CLITimeout, dir, env, bin, "--allow-all-tools", "-p", prompt)
		},
		write: func(path, content string) providertest.ToolCall {
			return providertest.ToolCall{Name: "apply_patch", Args: addPatch(path, content)}
		},
		edit: func(path, old, new string) providertest.ToolCall {
			return providertest.ToolCall{Name: "apply_patch", Args: updatePatch(path, old, new)}
		},
	})
}

// addPatch and updatePatch are apply_patch's patches that add a file
// and replace old by new in one.
func addPatch(path, content string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + path + "\n")
	for _, l := range fileedit.Lines(content) {
		b.WriteString("+" + l + "\n")
	}
	return b.String() + "*** End Patch\n"
}

func updatePatch(path, old, new string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Update File: " + path + "\n@@\n")
	for _, l := range fileedit.Lines(old) {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range fileedit.Lines(new) {
		b.WriteString("+" + l + "\n")
	}
	return b.String() + "*** End Patch\n"
}
