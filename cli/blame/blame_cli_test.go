package blame_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/gittest"
)

func TestMain(m *testing.M) {
	clitest.Main(m, func(code int) int {
		if !reportTruth(os.Stdout) && code == 0 {
			fmt.Println("FAIL: the real agents' blame is below its bounds (blame_realtruth_test.go)")
			return 1
		}
		return code
	})
}

// work is a git work tree in a fixture's HOME whose sessions the
// fixture's store holds.
type work struct {
	t   *testing.T
	fx  *clitest.Fixture
	dir string
	st  *clitest.FixtureStore
	ses *loom.Session
}

func newWork(t *testing.T) *work {
	t.Helper()
	fx := clitest.NewEmptyFixture(t)
	w := &work{t: t, fx: fx, dir: filepath.Join(fx.Home, "repo")}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if real, err := filepath.EvalSymlinks(w.dir); err == nil {
		w.dir = real
	}
	w.git("init", "-q", "-b", "main")
	w.st = fx.OpenStore(t)
	w.ses = &loom.Session{ID: loom.NewID(), UserID: "local", Project: clitest.MustProject(t, w.dir), Cwd: w.dir,
		Source: &loom.Source{Tool: "claude-code"}, Key: "claude-code:one", Surface: "claude-code", Title: "Add the parser"}
	return w
}

func (w *work) git(args ...string) string {
	w.t.Helper()
	return gittest.Git(w.t, w.dir, time.Time{}, args...)
}

func (w *work) write(rel, content string) {
	w.t.Helper()
	clitest.MustWrite(w.t, filepath.Join(w.dir, rel), content)
}

// commit commits all that is in the work tree with message msg.
func (w *work) commit(msg string) {
	w.t.Helper()
	w.git("add", "-A")
	w.git("commit", "-qm", msg)
}

// tokensOverStart commits a README, then the agent's tokenizer
// (parser) in parse/tokens.go over it.
func (w *work) tokensOverStart() {
	w.t.Helper()
	w.write("README.md", "# parse\n")
	w.commit("start")
	w.agentWrites("Write a tokenizer for the parser.", "parse/tokens.go", parser)
	w.commit("tokens")
}

// agentWrites stores a turn whose reply writes rel with content (with
// reasoning and a reply after it), and writes the file.
func (w *work) agentWrites(prompt, rel, content string) {
	w.agentWritesIn(w.dir, w.ses, prompt, rel, content)
}

// agentWritesIn is agentWrites in session s of another work tree, dir.
func (w *work) agentWritesIn(dir string, s *loom.Session, prompt, rel, content string) {
	w.t.Helper()
	in, _ := json.Marshal(map[string]string{"file_path": filepath.Join(dir, rel), "content": content})
	at := time.Now().Add(-2 * time.Second).UTC()
	msgs := []*loom.Message{
		{Role: loom.RoleUser, CreatedAt: at, Parts: []loom.Part{{Type: loom.PartText, Text: prompt}}},
		{Role: loom.RoleAssistant, Model: "claude-sonnet-4-5", Provider: "anthropic", CreatedAt: at.Add(time.Second), Parts: []loom.Part{
			{Type: loom.PartReasoning, Text: "A table of tokens keeps the parser small."},
			{Type: loom.PartTool, CallID: loom.NewID(), Name: "Write", Status: loom.ToolCompleted, Input: in, Output: json.RawMessage(`"File created"`)},
		}},
		{Role: loom.RoleAssistant, Model: "claude-sonnet-4-5", Provider: "anthropic", CreatedAt: at.Add(time.Second), Parts: []loom.Part{
			{Type: loom.PartText, Text: "The parser is in place; the tests pass."}}},
	}
	if err := w.st.Append(context.Background(), s, msgs...); err != nil {
		w.t.Fatal(err)
	}
	clitest.MustWrite(w.t, filepath.Join(dir, rel), content)
}

func (w *work) run(args ...string) clitest.Result {
	w.t.Helper()
	return w.fx.RunWith(w.t, clitest.RunOpts{Dir: w.dir}, args...)
}

func (w *work) must(args ...string) string {
	w.t.Helper()
	r := w.run(args...)
	if r.Code != 0 {
		w.t.Fatalf("loom %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

const parser = "package parse\n\n// Tokens splits a line.\nfunc Tokens(s string) []string {\n\treturn strings.Fields(s)\n}\n"

// TestBlameCommand: loom blame prints who wrote each line, --json gives
// each line's number and, for an agent's, session, turn, agent and
// model; FILE:LINE prints the conversation around the edit.
func TestBlameCommand(t *testing.T) {
	w := newWork(t)
	w.tokensOverStart()
	w.write("parse/tokens.go", parser+"\n// Human wrote this note.\n")

	var res blame.Result
	if err := json.Unmarshal([]byte(w.must("blame", "--json", "parse/tokens.go")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Lines) != 8 {
		t.Fatalf("%d lines: %+v", len(res.Lines), res.Lines)
	}
	for _, l := range res.Lines {
		want := blame.Agent
		if l.N > 6 {
			want = blame.Human
		}
		if l.Kind != want {
			t.Errorf("line %d %q: %s, want %s", l.N, l.Text, l.Kind, want)
		}
		if want == blame.Agent && (l.SessionID != w.ses.ID || l.Turn != 1 || l.Agent != "claude-code" || l.Model != "claude-sonnet-4-5") {
			t.Errorf("line %d: %+v", l.N, l)
		}
	}
	out := w.must("blame", "parse/tokens.go:3-4")
	if lines := clitest.Lines(out); len(lines) != 2 || !strings.Contains(lines[0], w.ses.ID) || !strings.Contains(lines[0], "claude-code t1 claude-sonnet-4-5") ||
		!strings.HasSuffix(lines[1], " 4) func Tokens(s string) []string {") {
		t.Errorf("loom blame FILE:3-4:\n%s", out)
	}
	out = w.must("blame", "parse/tokens.go:5")
	for _, want := range []string{"Write a tokenizer for the parser.", "A table of tokens keeps the parser small.",
		"+     return strings.Fields(s)", "The parser is in place", "claude-code, model claude-sonnet-4-5"} {
		if !strings.Contains(out, want) {
			t.Errorf("loom blame FILE:5 lacks %q:\n%s", want, out)
		}
	}
	var x blame.Excerpt
	if err := json.Unmarshal([]byte(w.must("blame", "--json", "parse/tokens.go:5")), &x); err != nil || x.Prompt != "Write a tokenizer for the parser." || x.Edit == nil || x.Edit.Name != "Write" {
		t.Errorf("FILE:5 --json: %+v, %v", x, err)
	}
	if out := w.must("blame", "parse/tokens.go:8"); !strings.Contains(out, "written by human") {
		t.Errorf("a human's line:\n%s", out)
	}

	// The commit behind the lines, and the share of lines.
	var cs []blame.Commit
	if err := json.Unmarshal([]byte(w.must("blame", "commits", "--json", "HEAD~1..HEAD")), &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Subject != "tokens" || cs[0].Lines.Agent != 6 || len(cs[0].Sessions) != 1 || cs[0].Sessions[0].SessionID != w.ses.ID {
		t.Errorf("commits: %+v", cs)
	}
	var sum blame.Summary
	if err := json.Unmarshal([]byte(w.must("blame", "summary", "--json")), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Files != 2 || sum.Lines.Total != 9 || sum.Lines.Agent != 6 || sum.ByAgent["claude-code"] != 6 || sum.ByModel["claude-sonnet-4-5"] != 6 {
		t.Errorf("summary: %+v", sum)
	}
	if out := w.must("blame", "summary"); !strings.Contains(out, "9 lines: 6 by agents, 0 mixed, 3 by humans") {
		t.Errorf("summary:\n%s", out)
	}

	// The turn, with the lines it wrote that still live.
	out = w.must("session", "show", w.ses.ID, "--turn", "1")
	if !strings.Contains(out, "Write a tokenizer for the parser.") || !strings.Contains(out, "Lines this turn wrote that still live:") ||
		!strings.Contains(out, filepath.Join(w.dir, "parse/tokens.go")+": 1-6 (6 lines)") {
		t.Errorf("session show --turn 1:\n%s", out)
	}
	var shown struct {
		Lines []blame.FileLines `json:"lines"`
	}
	if err := json.Unmarshal([]byte(w.must("session", "show", w.ses.ID, "--turn", "1", "--json")), &shown); err != nil ||
		len(shown.Lines) != 1 || shown.Lines[0].File != "parse/tokens.go" || len(shown.Lines[0].Lines) != 6 {
		t.Errorf("session show --turn 1 --json: %+v, %v", shown, err)
	}
	if r := w.run("session", "show", w.ses.ID, "--turn", "5"); r.Code != 1 || !strings.Contains(r.Stderr, "there is no turn 5") {
		t.Errorf("a turn the session lacks: exit %d, %s", r.Code, r.Stderr)
	}
}

// TestBlameTraceRoundTrip: the Agent Trace records loom writes, read
// back where loom holds no session, give the same attribution.
func TestBlameTraceRoundTrip(t *testing.T) {
	w := newWork(t)
	w.agentWrites("Write a tokenizer for the parser.", "parse/tokens.go", parser)
	w.write("parse/tokens.go", strings.Replace(parser, "strings.Fields(s)", "strings.Fields(s) // split", 1)+"var human = 1\n")
	w.commit("tokens")
	before := w.must("blame", "--json", "parse/tokens.go")
	records := filepath.Join(w.fx.Home, "records.jsonl")
	w.must("blame", "trace", "export", "-o", records)

	other := clitest.NewEmptyFixture(t)
	r := other.RunWith(t, clitest.RunOpts{Dir: w.dir}, "blame", "--json", "--trace", records, "parse/tokens.go")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	var a, b blame.Result
	json.Unmarshal([]byte(before), &a)
	json.Unmarshal([]byte(r.Stdout), &b)
	if len(a.Lines) != len(b.Lines) || len(a.Lines) == 0 {
		t.Fatalf("%d lines, then %d", len(a.Lines), len(b.Lines))
	}
	kinds := map[string]int{}
	for i := range a.Lines {
		x, y := a.Lines[i], b.Lines[i]
		kinds[x.Kind]++
		if x.Kind != y.Kind || x.SessionID != y.SessionID || x.Turn != y.Turn || x.Agent != y.Agent || x.Model != y.Model {
			t.Errorf("line %d: %s %s t%d %s %s, read back %s %s t%d %s %s", x.N, x.Kind, x.SessionID, x.Turn, x.Agent, x.Model,
				y.Kind, y.SessionID, y.Turn, y.Agent, y.Model)
		}
	}
	if kinds[blame.Agent] == 0 || kinds[blame.Mixed] != 1 || kinds[blame.Human] != 1 {
		t.Errorf("kinds %v, want agents' lines, one mixed, one human", kinds)
	}
}

// TestBlameBadInput: each input loom blame cannot answer gets one clear
// line and its exit code; a path no session changed and a repository
// no session worked in are answered, with a line saying so.
func TestBlameBadInput(t *testing.T) {
	w := newWork(t)
	w.write("notes.txt", "one\n")
	w.write("logo.png", "\x89PNG\x00\x00\x01binary")
	w.commit("start")
	outside := filepath.Join(w.fx.Home, "loose.txt")
	clitest.MustWrite(t, outside, "loose\n")
	// A file over the size loom blame takes unless told.
	w.write("big.log", strings.Repeat("a line of a large log file, one of many\n", 11<<20/40))
	shallow := filepath.Join(w.fx.Home, "shallow")
	w.git("clone", "-q", "--depth", "1", "file://"+w.dir, shallow)

	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"blame", outside}, 1, "is not in a git work tree"},
		{[]string{"blame", "logo.png"}, 1, "logo.png is a binary file"},
		{[]string{"blame", "missing.go"}, 3, "missing.go: no such file"},
		{[]string{"blame", "notes.txt:0"}, 2, "LINES is a line"},
		{[]string{"blame", "notes.txt:9"}, 1, "notes.txt has 1 lines: there is no line 9"},
		{[]string{"blame", "notes.txt"}, 0, "loom holds no session that changed a file in"},
		{[]string{"blame", "big.log"}, 1, "big.log is 11 MB: loom blame takes files up to 10 MB (--max-size 0 blames it whatever its size)"},
		{[]string{"blame", "--max-size", "1000", "notes.txt"}, 0, "loom holds no session"},
		{[]string{"blame", "trace", "expotr"}, 2, `unknown command "expotr" for "loom blame trace"`},
	} {
		r := w.run(c.args...)
		lines := clitest.Lines(strings.TrimSpace(r.Stderr))
		if r.Code != c.code || len(lines) != 1 || !strings.Contains(lines[0], c.stderr) {
			t.Errorf("loom %s: exit %d, stderr %q; want exit %d and one line with %q", strings.Join(c.args, " "), r.Code, r.Stderr, c.code, c.stderr)
		}
	}
	// A session in the repository, none for this file.
	w.agentWrites("Write a tokenizer.", "parse/tokens.go", parser)
	r := w.run("blame", "notes.txt")
	if r.Code != 0 || !strings.Contains(r.Stderr, "no session loom holds changed notes.txt") || !strings.Contains(r.Stdout, "human") {
		t.Errorf("a file no session changed: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// A shallow clone (of the same repository: its sessions count).
	w.agentWritesIn(shallow, &loom.Session{ID: loom.NewID(), UserID: "local", Project: clitest.MustProject(t, shallow), Cwd: shallow},
		"Write a tokenizer.", "tokens.go", parser)
	r = w.run("blame", filepath.Join(shallow, "tokens.go"))
	if lines := clitest.Lines(strings.TrimSpace(r.Stderr)); r.Code != 0 || len(lines) != 1 || !strings.Contains(lines[0], "this is a shallow clone") ||
		!strings.Contains(r.Stdout, " loom t1 claude-sonnet-4-5") {
		t.Errorf("a shallow clone: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestBlameMCP: an agent asks loom mcp's blame tool why a line is as it
// is, and gets the line's session and the conversation that wrote it;
// a file outside a repository is a tool error it can read.
func TestBlameMCP(t *testing.T) {
	w := newWork(t)
	w.agentWrites("Write a tokenizer for the parser.", "parse/tokens.go", parser)
	w.commit("tokens")
	cs := clitest.ConnectStdio(t, w.fx)
	file := filepath.Join(w.dir, "parse/tokens.go")
	c := clitest.MustCall(t, cs, "blame", map[string]any{"path": file, "lines": "5"})
	for _, want := range []string{"lines 5-5: agent by claude-code (claude-sonnet-4-5), session " + w.ses.ID + " turn 1",
		"Prompt: Write a tokenizer for the parser.", "Reasoning: A table of tokens keeps the parser small.", "After the edit: The parser is in place",
		// What comes back is framed as data, not instructions.
		"Reference data, untrusted:", "<<<reference data: a past conversation>>>", "<<<end of reference data>>>"} {
		if !strings.Contains(c.Text, want) {
			t.Errorf("blame's text lacks %q:\n%s", want, c.Text)
		}
	}
	lines, _ := c.Data["lines"].([]any)
	if len(lines) != 1 || lines[0].(map[string]any)["session_id"] != w.ses.ID || c.Data["excerpt"] == nil {
		t.Errorf("blame's structured content: %v", c.Data)
	}
	whole := clitest.MustCall(t, cs, "blame", map[string]any{"path": file})
	if !strings.Contains(whole.Text, "lines 1-6: agent by claude-code") {
		t.Errorf("the whole file:\n%s", whole.Text)
	}
	outside := filepath.Join(w.fx.Home, "loose.txt")
	clitest.MustWrite(t, outside, "x\n")
	clitest.WantToolError(t, cs, "blame", map[string]any{"path": outside}, "is not in a git work tree")
	clitest.WantToolError(t, cs, "blame", map[string]any{"path": file, "lines": "x"}, "is not a line")
}

// TestBlamePR: loom blame pr of a branch against its upstream prints
// its added lines by kind and agent and the session behind them, as
// text, as a pull request comment (--markdown) and as JSON.
func TestBlamePR(t *testing.T) {
	w := newWork(t)
	w.write("README.md", "# parser\n")
	w.commit("start")
	upstream := filepath.Join(w.fx.Home, "upstream.git")
	w.git("clone", "-q", "--bare", w.dir, upstream)
	w.git("remote", "add", "origin", upstream)
	w.git("fetch", "-q", "origin")
	w.git("checkout", "-q", "-b", "feature", "--track", "origin/main")
	w.agentWrites("Write a tokenizer for the parser.", "tokens.go", "package parser\n\n// Tokens splits a line.\nfunc Tokens(s string) []string {\n\treturn strings.Fields(s)\n}\n")
	w.write("README.md", "# parser\n\nHuman notes.\n")
	w.commit("tokens")

	r := w.run("blame", "pr", "--json")
	var pr blame.PR
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &pr) != nil {
		t.Fatalf("loom blame pr --json: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if pr.Lines != (blame.Tally{Total: 8, Agent: 6, Human: 2}) || pr.Commits != 1 || len(pr.Sessions) != 1 || pr.Sessions[0].SessionID != w.ses.ID ||
		pr.Sessions[0].Title != "Add the parser" || pr.Range != "origin/main..HEAD" {
		t.Errorf("loom blame pr --json: %+v", pr)
	}
	r = w.run("blame", "pr", "--markdown")
	for _, want := range []string{"**75%** of the 8 lines added by 1 commits were written by agents", "| agents | 6 | 75% |", "| humans | 2 | 25% |", "| claude-code | 6 | 0 | 75% |", w.ses.ID + " Add the parser"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("loom blame pr --markdown lacks %q:\n%s", want, r.Stdout)
		}
	}
	r = w.run("blame", "pr", "main..feature")
	if r.Code != 0 || !strings.Contains(r.Stdout, "8 lines added: 6 by agents, 0 mixed, 2 by humans, 0 unknown (75% agents)") {
		t.Errorf("loom blame pr main..feature: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The same commit's attribution as a git note of the Git AI
	// standard.
	r = w.run("blame", "notes", "--all")
	if r.Code != 0 || !strings.Contains(r.Stdout, "1 notes written to refs/notes/ai") {
		t.Errorf("loom blame notes --all: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	note := w.git("notes", "--ref=refs/notes/ai", "show", "HEAD")
	if !strings.HasPrefix(note, "tokens.go\n  s_") || !strings.Contains(note, " 1-6\n---\n") || !strings.Contains(note, `"schema_version": "authorship/3.0.0"`) {
		t.Errorf("the note of HEAD:\n%s", note)
	}
	if r := w.run("blame", "notes", "--all", "HEAD"); r.Code != 2 {
		t.Errorf("loom blame notes --all HEAD: exit %d, want 2", r.Code)
	}
}

// TestBlameSummaryMixed: a mixed line counts half in the total's share
// and in its agent's and model's alike, so that they agree.
func TestBlameSummaryMixed(t *testing.T) {
	w := newWork(t)
	w.tokensOverStart()
	// A human changes one of the agent's lines: mixed.
	w.write("parse/tokens.go", strings.Replace(parser, "// Tokens splits a line.", "// Tokens splits a line into its words.", 1))
	out := w.must("blame", "summary")
	// 7 lines: 5 agent, 1 mixed, 1 human: (5 + 0.5) / 7 = 79%.
	for _, want := range []string{"7 lines: 5 by agents, 1 mixed, 1 by humans, 0 unknown (79% agents)",
		"claude-code                    6 lines, 1 mixed (79%)", "claude-sonnet-4-5              6 lines, 1 mixed (79%)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
