package blame

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
	"github.com/loomhq/loom/internal/testkit/gittest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/sqlite"
)

// repo is a git work tree and a store whose sessions worked in it, on
// a clock the test moves: agents' edits are stored tool calls (and
// written to the files, as the agent's tool would), humans write the
// files, and commits are made at the clock's time.
type repo struct {
	t     *testing.T
	dir   string
	st    *sqlite.Store
	clock time.Time
	ses   map[string]*loom.Session
	// cache is the line-age cache of the repository's blames.
	cache string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &repo{t: t, dir: dir, st: st, clock: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), ses: map[string]*loom.Session{}}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *repo) tick(d time.Duration) { r.clock = r.clock.Add(d) }

func (r *repo) git(args ...string) string {
	r.t.Helper()
	return gittest.Git(r.t, r.dir, r.clock, args...)
}

func (r *repo) commit(msg string) {
	r.t.Helper()
	r.tick(time.Minute)
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
}

func (r *repo) write(rel, content string) {
	r.t.Helper()
	gittest.Write(r.t, r.dir, rel, content)
}

func (r *repo) read(rel string) string {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, rel))
	if err != nil {
		r.t.Fatal(err)
	}
	return string(b)
}

// session is the session named name of agent tool, made on first use.
func (r *repo) session(name, tool string) *loom.Session {
	if s := r.ses[name]; s != nil {
		return s
	}
	p, err := paths.DetectProject(r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	s := &loom.Session{ID: loom.NewID(), UserID: "local", Project: p, Cwd: r.dir, Model: "m-" + name, Surface: tool, Key: tool + ":" + name}
	if tool != "loom" {
		s.Source = &loom.Source{Tool: tool}
	}
	r.ses[name] = s
	return s
}

// agent stores a turn of session name (agent tool) whose reply calls
// tool with input, then applies the change to the file, as the tool
// did.
func (r *repo) agent(name, tool, call string, input map[string]any, apply func()) {
	r.t.Helper()
	r.tick(10 * time.Second)
	s := r.session(name, tool)
	in, _ := json.Marshal(input)
	at := r.clock
	prompt := &loom.Message{Role: loom.RoleUser, CreatedAt: at.Add(-time.Second), Parts: []loom.Part{{Type: loom.PartText, Text: "please change " + call}}}
	reply := &loom.Message{Role: loom.RoleAssistant, Model: "m-" + name, Provider: "p", CreatedAt: at, Parts: []loom.Part{
		{Type: loom.PartText, Text: "Changing it."},
		{Type: loom.PartTool, CallID: loom.NewID(), Name: call, Status: loom.ToolCompleted, Input: in, Output: json.RawMessage(`"done"`)}}}
	if err := r.st.Append(context.Background(), s, prompt, reply); err != nil {
		r.t.Fatal(err)
	}
	apply()
}

// agentWrite is an agent's Write of a whole file.
func (r *repo) agentWrite(name, rel, content string) {
	r.agent(name, "claude-code", "Write", map[string]any{"file_path": filepath.Join(r.dir, rel), "content": content}, func() { r.write(rel, content) })
}

// agentEdit is an agent's Edit of a file: old by new, once.
func (r *repo) agentEdit(name, tool, rel, old, new string) {
	r.t.Helper()
	cur := r.read(rel)
	if !strings.Contains(cur, old) {
		r.t.Fatalf("%s does not hold %q", rel, old)
	}
	r.agent(name, tool, "Edit", map[string]any{"file_path": filepath.Join(r.dir, rel), "old_string": old, "new_string": new},
		func() { r.write(rel, strings.Replace(cur, old, new, 1)) })
}

// blame blames rel as the work tree has it, with the line-age cache
// the repository's blames share and without one: both must say the
// same.
func (r *repo) blame(rel string) *Result {
	r.t.Helper()
	if r.cache == "" {
		r.cache = r.t.TempDir()
	}
	var res [2]*Result
	for i, cache := range []string{r.cache, ""} {
		b := &Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local", Now: func() time.Time { return r.clock.Add(time.Hour) }, Cache: cache}
		var err error
		if res[i], err = b.File(context.Background(), filepath.Join(r.dir, rel), ""); err != nil {
			r.t.Fatal(err)
		}
	}
	a, _ := json.Marshal(res[0])
	b, _ := json.Marshal(res[1])
	if string(a) != string(b) {
		r.t.Fatalf("%s blamed with the line-age cache:\n%s\nwithout:\n%s", rel, a, b)
	}
	return res[0]
}

// want checks each line's kind and session: who maps a line's text (a
// part of it) to "agent:<session>", "mixed:<session>", "human" or
// "unknown".
func (r *repo) want(res *Result, who map[string]string) {
	r.t.Helper()
	seen := map[string]bool{}
	for _, l := range res.Lines {
		for part, w := range who {
			if !strings.Contains(l.Text, part) {
				continue
			}
			seen[part] = true
			got := l.Kind
			if l.SessionID != "" {
				for name, s := range r.ses {
					if s.ID == l.SessionID {
						got += ":" + name
					}
				}
			}
			if got != w {
				r.t.Errorf("%s line %d %q: %s, want %s", res.Path, l.N, l.Text, got, w)
			}
		}
	}
	for part := range who {
		if !seen[part] {
			r.t.Errorf("%s has no line with %q", res.Path, part)
		}
	}
}

func lines(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "\t%s_%d := compute(%d, \"%s\")\n", prefix, i, i, prefix)
	}
	return b.String()
}

// TestBlameThroughHistory: an agent's write, a human's changes of one
// of its lines and of its own lines, a second agent's edit, a rename
// committed, a re-indentation not committed: each line is the one who
// wrote it last, a changed agent's line mixed, through the rename and
// the re-indentation.
func TestBlameThroughHistory(t *testing.T) {
	r := newRepo(t)
	r.write("README.md", "# demo\n")
	r.commit("start")
	first := "package demo\n\nfunc First() {\n" + lines("alpha", 6) + "}\n"
	r.agentWrite("s1", "a.go", first)
	r.commit("first")
	// A human changes one of the agent's lines and adds a function.
	cur := strings.Replace(r.read("a.go"), `alpha_3 := compute(3, "alpha")`, `alpha_3 := compute(3, "alpha") + offset`, 1)
	r.write("a.go", cur+"\nfunc Human() int {\n\treturn humanValue * 7\n}\n")
	r.tick(time.Minute)
	r.agentEdit("s2", "codex", "a.go", "func Human() int {", "func Second() {\n"+lines("beta", 3)+"}\n\nfunc Human() int {")
	r.commit("second")
	r.tick(time.Minute)
	r.git("mv", "a.go", "b.go")
	r.commit("rename")
	// Re-indented, not committed.
	r.write("b.go", strings.Replace(r.read("b.go"), "\talpha_5", "        alpha_5", 1))

	res := r.blame("b.go")
	r.want(res, map[string]string{
		"package demo": "agent:s1", "func First": "agent:s1", "alpha_1": "agent:s1", "alpha_3": "mixed:s1",
		"alpha_5": "agent:s1", "alpha_6": "agent:s1",
		"func Second": "agent:s2", "beta_1": "agent:s2", "beta_3": "agent:s2",
		"func Human": "human", "humanValue": "human",
	})
	if res.Path != "b.go" || len(res.Notes) != 0 {
		t.Errorf("result %s with notes %q", res.Path, res.Notes)
	}
	for _, l := range res.Lines {
		if strings.Contains(l.Text, "alpha_1") && (l.Agent != "claude-code" || l.Model != "m-s1" || l.Turn != 1 || l.From != "a.go" || l.Tool != "Write") {
			t.Errorf("agent line: %+v", l)
		}
	}
}

// TestBlameMovedAndWritten: a function a human moved to another file
// is still its agent's; a write that kept lines of an earlier write
// does not take them; a shell command that changed the file leaves
// what followed unknown.
func TestBlameMovedAndWritten(t *testing.T) {
	r := newRepo(t)
	r.agentWrite("s1", "lib/x.go", "package lib\n\nfunc Moved() {\n"+lines("gamma", 4)+"}\n")
	r.commit("x")
	// A later write keeps the first one's lines and adds some.
	r.agentWrite("s2", "lib/x.go", r.read("lib/x.go")+"\nfunc Added() {\n"+lines("delta", 2)+"}\n")
	r.commit("more")
	// A human moves Moved to y.go.
	x := r.read("lib/x.go")
	start := strings.Index(x, "func Moved")
	end := strings.Index(x, "}\n") + 2
	r.write("lib/y.go", "package lib\n\n"+x[start:end])
	r.write("lib/x.go", x[:start]+x[end:])
	r.commit("move")
	res := r.blame("lib/y.go")
	r.want(res, map[string]string{"func Moved": "agent:s1", "gamma_2": "agent:s1", "gamma_4": "agent:s1"})
	res = r.blame("lib/x.go")
	r.want(res, map[string]string{"func Added": "agent:s2", "delta_1": "agent:s2", "package lib": "agent:s1"})

	// The agent's sed -i changed a human's line of z.txt: the line it
	// made is the agent's (the substitution's result), not mixed.
	r.write("z.txt", "kept line one\nother line\n")
	r.commit("z")
	r.agent("s3", "claude-code", "Bash", map[string]any{"command": "sed -i 's/one/two/' z.txt"}, func() { r.write("z.txt", "kept line two\nother line\n") })
	res = r.blame("z.txt")
	r.want(res, map[string]string{"kept line": "agent:s3", "other line": "human"})
	if l := res.Lines[0]; l.Evidence != EvidenceShell || l.Tool != "Bash" {
		t.Errorf("the sed's line: %+v", l)
	}
	// A program's output redirected into w.txt: its lines since are
	// unknown.
	r.write("w.txt", "old output\n")
	r.commit("w")
	r.agent("s3", "claude-code", "Bash", map[string]any{"command": "./gen > w.txt"}, func() { r.write("w.txt", "new output\n") })
	r.want(r.blame("w.txt"), map[string]string{"new output": "unknown"})
	// A program the agent ran that names the file it writes: the
	// agent's, with that said.
	r.agent("s3", "claude-code", "Bash", map[string]any{"command": "python3 - <<'EOF'\nopen('gen.py', 'w').write('VALUE = 1\\n')\nEOF"}, func() { r.write("gen.py", "VALUE = 1\n") })
	res = r.blame("gen.py")
	r.want(res, map[string]string{"VALUE": "agent:s3"})
	if l := res.Lines[0]; l.Evidence != EvidenceProgram {
		t.Errorf("the program's line: %+v", l)
	}
}
