package blame

import (
	"strings"
	"testing"
	"time"
)

// TestBlameCopiedByTheAgent: the agent wrote a.go and copied it to
// b.go (cp); a human then changed lines of b.go. The copy's lines are
// the agent's, braces and blank lines too, and the lines the human
// changed are mixed.
func TestBlameCopiedByTheAgent(t *testing.T) {
	r := newRepo(t)
	r.write("README.md", "# copy\n")
	r.commit("start")
	src := "package shapes\n\n// Area is the area of a rectangle.\nfunc Area(width, height float64) float64 {\n\treturn width * height\n}\n\n// Perimeter is the perimeter of a rectangle.\nfunc Perimeter(width, height float64) float64 {\n\treturn 2 * (width + height)\n}\n"
	r.agentWrite("s1", "a.go", src)
	r.agent("s1", "claude-code", "Bash", map[string]any{"command": "cp a.go b.go"}, func() { r.write("b.go", src) })
	r.commit("shapes")
	r.tick(time.Hour)
	b := strings.Replace(r.read("b.go"), "// Area is the area of a rectangle.", "// Area is the area of a square's rectangle.", 1)
	b = strings.Replace(b, "\treturn 2 * (width + height)", "\treturn 2 * (width + height) // both sides", 1)
	r.write("b.go", b)
	r.commit("human")
	res := r.blame("b.go")
	r.want(res, map[string]string{
		"package shapes": "agent:s1", "func Area": "agent:s1", "return width * height": "agent:s1", "func Perimeter": "agent:s1",
		"square's rectangle": "mixed:s1", "both sides": "mixed:s1",
	})
	for _, l := range res.Lines {
		if l.Kind == Unknown || l.Kind == Human {
			t.Errorf("line %d %q: %s", l.N, l.Text, l.Kind)
		}
	}
}

// TestBlameCopiedIntoADirectory: the agent copied its file into a
// directory (cp a.go pkg/), and a human then changed a line of the
// copy and added a function: the copy's lines are the agent's, the
// changed one mixed, the human's function the human's.
func TestBlameCopiedIntoADirectory(t *testing.T) {
	r := newRepo(t)
	r.write("README.md", "# copy\n")
	r.commit("start")
	src := "package shapes\n\n// Area is the area of a rectangle.\nfunc Area(width, height float64) float64 {\n\treturn width * height\n}\n\n// Perimeter is the perimeter of a rectangle.\nfunc Perimeter(width, height float64) float64 {\n\treturn 2 * (width + height)\n}\n"
	r.agentWrite("s1", "a.go", src)
	r.commit("shapes")
	r.tick(time.Hour)
	r.agent("s1", "claude-code", "Bash", map[string]any{"command": "mkdir -p geo && cp a.go geo/"}, func() { r.write("geo/a.go", src) })
	r.commit("copy")
	r.tick(time.Hour)
	r.write("geo/a.go", strings.Replace(r.read("geo/a.go"), "// Perimeter is the perimeter", "// Perimeter is the full perimeter", 1)+"\n// Human is a human's.\nfunc Human() {}\n")
	r.commit("human")
	r.want(r.blame("geo/a.go"), map[string]string{
		"package shapes": "agent:s1", "func Area": "agent:s1", "return width * height": "agent:s1", "func Perimeter": "agent:s1",
		"full perimeter": "mixed:s1", "Human is": "human", "func Human": "human",
	})
}

// TestBlameSedThenCopy: the agent's sed -i of a human's file, then its
// cp of that file: the copy's line the substitution made is the
// agent's, as it is in the file it copied.
func TestBlameSedThenCopy(t *testing.T) {
	r := newRepo(t)
	r.write("conf/base.ini", "[server]\nlisten_address = 127.0.0.1\nworker_count = 4\n")
	r.commit("base")
	r.tick(time.Hour)
	r.agent("s1", "claude-code", "Bash", map[string]any{"command": "sed -i 's/worker_count = 4/worker_count = 16/' conf/base.ini && cp conf/base.ini conf/prod.ini"}, func() {
		r.write("conf/base.ini", "[server]\nlisten_address = 127.0.0.1\nworker_count = 16\n")
		r.write("conf/prod.ini", "[server]\nlisten_address = 127.0.0.1\nworker_count = 16\n")
	})
	r.commit("prod")
	for _, f := range []string{"conf/base.ini", "conf/prod.ini"} {
		r.want(r.blame(f), map[string]string{"worker_count": "agent:s1"})
	}
}

// TestBlameSedCommittedThenCopy: the agent's sed -i of a human's file,
// committed, then, in a later commit, its cp of that file: the copy's
// commit's parent already holds what the sed made, so the line is read
// against the file as the last commit before the sed held it, and is
// the agent's in the copy as in the file it copied.
func TestBlameSedCommittedThenCopy(t *testing.T) {
	r := newRepo(t)
	r.write("conf/base.ini", "[server]\nlisten_address = 127.0.0.1\nworker_count = 4\n")
	r.commit("base")
	r.tick(time.Hour)
	r.agent("s1", "claude-code", "Bash", map[string]any{"command": "sed -i 's/worker_count = 4/worker_count = 16/' conf/base.ini"}, func() {
		r.write("conf/base.ini", "[server]\nlisten_address = 127.0.0.1\nworker_count = 16\n")
	})
	r.commit("workers")
	r.tick(time.Hour)
	r.agent("s1", "claude-code", "Bash", map[string]any{"command": "cp conf/base.ini conf/prod.ini"}, func() {
		r.write("conf/prod.ini", "[server]\nlisten_address = 127.0.0.1\nworker_count = 16\n")
	})
	r.commit("prod")
	for _, f := range []string{"conf/base.ini", "conf/prod.ini"} {
		r.want(r.blame(f), map[string]string{"worker_count": "agent:s1", "listen_address": "human"})
	}
}

// TestBlameCopyOfARenamedFile: a human wrote notes.txt and the agent
// appended a line to it (printf >>); a human renamed it (git mv,
// committed), and the agent copied the renamed file (cp). git blame of
// the copy stops at the copy's commit and never names notes.txt, the
// name the agent's command had: the appended line of the copy is the
// agent's all the same, as the renamed file's is, and the human's lines
// stay the human's.
func TestBlameCopyOfARenamedFile(t *testing.T) {
	r := newRepo(t)
	r.write("notes.txt", "# Release plan, written by hand\n# Second note on the plan, kept\n")
	r.commit("start")
	line := "agentValue7 := computeTotal(7, \"key7\") // tok7x"
	r.agent("s1", "claude-code", "Bash", map[string]any{"command": "printf '%s\\n' '" + line + "' >> notes.txt"}, func() { r.write("notes.txt", r.read("notes.txt")+line+"\n") })
	r.commit("append")
	r.tick(time.Hour)
	r.git("mv", "notes.txt", "plan.txt")
	r.commit("rename")
	r.tick(time.Hour)
	r.agent("s1", "claude-code", "Bash", map[string]any{"command": "cp plan.txt copy.txt"}, func() { r.write("copy.txt", r.read("plan.txt")) })
	r.commit("copy")
	for _, f := range []string{"plan.txt", "copy.txt"} {
		r.want(r.blame(f), map[string]string{"agentValue7": "agent:s1", "Release plan": "human", "Second note": "human"})
	}
}
