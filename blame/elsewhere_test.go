package blame

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/paths"
)

// elsewhereSession stores a session recorded at root, a path not on
// this machine, under a project of its own (as sessions imported from
// another machine's files are), whose turn writes rel (its path under
// root) with content; the test writes the same content into the clone.
func (r *repo) elsewhereSession(name, root, rel, content string) {
	r.t.Helper()
	r.tick(10 * time.Second)
	p, _ := paths.DetectProject(r.dir)
	s := r.ses[name]
	if s == nil {
		s = &loom.Session{ID: loom.NewID(), UserID: "local", Project: loom.Project{ID: "path:" + root, Name: p.Name, Root: root}, Cwd: root,
			Model: "m-" + name, Surface: "claude-code", Key: "claude-code:" + name, Source: &loom.Source{Tool: "claude-code"}}
		r.ses[name] = s
	}
	in, _ := json.Marshal(map[string]any{"file_path": root + "/" + rel, "content": content})
	prompt := &loom.Message{Role: loom.RoleUser, CreatedAt: r.clock.Add(-time.Second), Parts: []loom.Part{{Type: loom.PartText, Text: "write " + rel}}}
	reply := &loom.Message{Role: loom.RoleAssistant, Model: "m-" + name, Provider: "p", CreatedAt: r.clock, Parts: []loom.Part{
		{Type: loom.PartTool, CallID: loom.NewID(), Name: "Write", Status: loom.ToolCompleted, Input: in, Output: json.RawMessage(`"done"`)}}}
	if err := r.st.Append(context.Background(), s, prompt, reply); err != nil {
		r.t.Fatal(err)
	}
}

// TestBlameSessionsRecordedElsewhere: sessions recorded at another
// path (another machine's home, under a project of that path) are this
// clone's when their edited files are its files; where none of their
// edits can be matched, the lines are unknown, and the note says why,
// not "import the sessions" and not "human".
func TestBlameSessionsRecordedElsewhere(t *testing.T) {
	r := newRepo(t)
	a := "package app\n\n// Start starts the application server.\nfunc Start() error {\n\treturn serve(listenAddress)\n}\n"
	b := "package app\n\n// Stop stops the application server.\nfunc Stop() error {\n\treturn shutdown(gracePeriod)\n}\n"
	r.elsewhereSession("s1", "/home/someone/projects/app", "internal/app/start.go", a)
	r.write("internal/app/start.go", a)
	r.elsewhereSession("s1", "/home/someone/projects/app", "internal/app/stop.go", b)
	r.write("internal/app/stop.go", b)
	r.commit("app")
	r.want(r.blame("internal/app/start.go"), map[string]string{"func Start": "agent:s1", "listenAddress": "agent:s1"})

	// A clone whose sessions' files are none of its own.
	o := newRepo(t)
	o.elsewhereSession("s2", "/home/someone/projects/"+filepath.Base(o.dir), "gone/old.go", "package old\n")
	o.write("main.go", "package main\n\nfunc main() {}\n")
	o.commit("main")
	res := o.blame("main.go")
	for _, l := range res.Lines {
		if l.Kind != Unknown {
			t.Errorf("main.go:%d is %s, want unknown", l.N, l.Kind)
		}
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "unknown: 1 sessions of this repository were recorded elsewhere") {
		t.Errorf("notes %q", res.Notes)
	}
}
