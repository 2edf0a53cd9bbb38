package blame

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/gittest"
	"github.com/loomhq/loom/paths"
)

// worktreeSession is session name of Claude Code, recorded in the work
// tree at dir (a second worktree of r's repository).
func (r *repo) worktreeSession(name, dir string) {
	r.t.Helper()
	p, err := paths.DetectProject(dir)
	if err != nil {
		r.t.Fatal(err)
	}
	r.ses[name] = &loom.Session{ID: loom.NewID(), UserID: "local", Project: p, Cwd: dir, Model: "m-" + name, Surface: "claude-code",
		Key: "claude-code:" + name, Source: &loom.Source{Tool: "claude-code"}}
}

// handler is a function of n lines that say something, named name.
func handler(name string, n int) string {
	var b strings.Builder
	b.WriteString("func " + name + "(ctx context.Context, req *Request) error {\n")
	for i := 1; i <= n-2; i++ {
		b.WriteString("\tif err := req.Check" + strings.Repeat("x", i) + "(ctx); err != nil {\n\t\treturn fmt.Errorf(\"check hook controller step: %w\", err)\n\t}\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// TestBlameOtherWorktreeUnmerged: a session's edit in a second
// worktree that was never merged is no evidence for the lines a human
// committed in the main worktree later, however like them; the same
// session's edit committed in its worktree and merged is its own.
func TestBlameOtherWorktreeUnmerged(t *testing.T) {
	r := newRepo(t)
	r.write("hooks/ctl.go", "package hooks\n\n// Controller runs the hooks of a repository.\ntype Controller struct{}\n")
	r.write("hooks/merged.go", "package hooks\n")
	r.commit("start")
	wt := filepath.Join(filepath.Dir(r.dir), filepath.Base(r.dir)+"-feature")
	r.git("worktree", "add", "-q", "-b", "feature", wt)
	r.worktreeSession("B", wt)
	body := handler("RunHooks", 6)
	in := filepath.Join(wt, "hooks/ctl.go")
	r.agent("B", "claude-code", "Edit", map[string]any{"file_path": in, "old_string": "type Controller struct{}\n", "new_string": "type Controller struct{}\n\n" + body},
		func() {
			gittest.Write(t, wt, "hooks/ctl.go", "package hooks\n\n// Controller runs the hooks of a repository.\ntype Controller struct{}\n\n"+body)
		})
	// B writes a file and commits it in its worktree.
	commitIn := func(rel, fn string) {
		content := "package hooks\n\n" + handler(fn, 5)
		r.agent("B", "claude-code", "Write", map[string]any{"file_path": filepath.Join(wt, rel), "content": content},
			func() { gittest.Write(t, wt, rel, content) })
		r.tick(time.Minute)
		gittest.Git(t, wt, r.clock, "add", rel)
		gittest.Git(t, wt, r.clock, "commit", "-q", "-m", fn)
		r.tick(time.Minute)
	}
	// Merged, then squashed into a commit of the main worktree.
	commitIn("hooks/merged.go", "MergeHooks")
	r.git("merge", "-q", "--no-ff", "-m", "feature", "feature")
	commitIn("hooks/squashed.go", "SquashHooks")
	r.git("merge", "-q", "--squash", "feature")
	r.commit("squash hooks")
	// Later, a human writes the same handler in the main worktree.
	r.tick(time.Hour)
	r.write("hooks/ctl.go", r.read("hooks/ctl.go")+"\n"+body)
	r.commit("run hooks")

	res := r.blame("hooks/ctl.go")
	agentLines := 0
	for _, l := range res.Lines {
		if l.Kind != Human {
			agentLines++
			t.Errorf("line %d %q: %s of %s, want human", l.N, l.Text, l.Kind, l.SessionID)
		}
	}
	if agentLines > 0 {
		t.Errorf("%d of %d lines credited to the unmerged session", agentLines, len(res.Lines))
	}
	r.want(r.blame("hooks/merged.go"), map[string]string{"func MergeHooks": "agent:B", "Checkxxx(": "agent:B"})
	r.want(r.blame("hooks/squashed.go"), map[string]string{"func SquashHooks": "agent:B", "Checkxxx(": "agent:B"})

	// The worktree removed, its history is gone with it: no one can tell
	// where its edit went, and the answer kept for the file is not
	// given again as if it could (a blame with the cache and one
	// without agree).
	r.git("worktree", "remove", "--force", wt)
	r.blame("hooks/ctl.go")
}
