package blame

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/fake"
	"github.com/loomhq/loom/internal/testkit/gittest"
)

// blamerOfNoSession blames with the edit index of a store that holds no
// session (a clone's, on a machine where none of its sessions ran): its
// lines can be credited only from the notes the repository carries.
func blamerOfNoSession() *Blamer {
	edits := &fake.EditStore{
		UnindexedEditsFn: func(context.Context, int) ([]loom.EditSource, error) { return nil, nil },
		EditsFn:          func(context.Context, loom.EditQuery) ([]loom.FileEdit, error) { return nil, nil },
		ProjectRootsFn:   func(context.Context, string, string) ([]string, error) { return nil, nil },
	}
	roots := &fake.RootLister{RecordedRootsFn: func(context.Context, string) ([]loom.RecordedRoot, error) { return nil, nil }}
	// An empty index's version, as a store's own.
	versions := &fake.EditVersioner{EditVersionFn: func(context.Context) (string, error) { return "0", nil }}
	return &Blamer{Store: edits, Roots: roots, Versions: versions, UserID: "local"}
}

// TestNotesRoundTrip: loom's attributions written as git notes of the
// Git AI standard, pushed with the repository, are read back by a clone
// whose store holds no session: the same lines are the same sessions'
// (turn, agent, model), a mixed line mixed.
func TestNotesRoundTrip(t *testing.T) {
	r := newRepo(t)
	r.write("README.md", "# notes\n")
	r.commit("start")
	r.agentWrite("s1", "calc.go", "package calc\n\n// Add adds two numbers.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n")
	r.commit("add")
	r.tick(time.Hour)
	r.write("calc.go", strings.Replace(r.read("calc.go"), "// Add adds two numbers.", "// Add adds two integers.", 1)+"\n// Written by hand.\n")
	r.commit("human")
	r.agentEdit("s2", "codex", "calc.go", "// Written by hand.\n", "// Written by hand.\n\n// Sub subtracts b from a.\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n")
	r.commit("sub")
	want := r.blame("calc.go")

	b := &Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local"}
	n, err := b.Notes(context.Background(), Git{Dir: r.dir}, AllCommits, "test")
	if err != nil || n != 3 {
		t.Fatalf("notes written: %d, %v; want 3 (add, human's mixed line, sub)", n, err)
	}
	note := r.git("notes", "--ref="+NotesRef, "show", "HEAD")
	if !strings.Contains(note, "calc.go\n  s_") || !strings.Contains(note, "\n---\n") || !strings.Contains(note, `"schema_version": "authorship/3.0.0"`) {
		t.Errorf("HEAD's note:\n%s", note)
	}

	clone := filepath.Join(t.TempDir(), "clone")
	gittest.Git(t, filepath.Dir(clone), time.Time{}, "clone", "-q", r.dir, clone)
	gittest.Git(t, clone, time.Time{}, "fetch", "-q", "origin", NotesRef+":"+NotesRef)
	got, err := blamerOfNoSession().File(context.Background(), filepath.Join(clone, "calc.go"), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Lines) != len(want.Lines) {
		t.Fatalf("the clone's calc.go has %d lines, want %d", len(got.Lines), len(want.Lines))
	}
	agents := 0
	for i, w := range want.Lines {
		g := got.Lines[i]
		if g.Kind != w.Kind || g.SessionID != w.SessionID || g.Turn != w.Turn || g.Agent != w.Agent || g.Model != w.Model || g.Provider != w.Provider {
			t.Errorf("line %d %q: from the notes %s %s t%d %s %s, want %s %s t%d %s %s", w.N, w.Text, g.Kind, g.SessionID, g.Turn, g.Agent, g.Model,
				w.Kind, w.SessionID, w.Turn, w.Agent, w.Model)
		}
		if w.SessionID != "" {
			agents++
			if g.Source != "notes" {
				t.Errorf("line %d: source %q, want notes", w.N, g.Source)
			}
		}
	}
	if agents < 8 {
		t.Errorf("only %d agents' lines to compare", agents)
	}
}

// TestReadGitAINotes: an authorship log written as the Git AI
// standard's examples are (sessions with trace keys, a known human, a
// legacy prompt) credits its lines to its sessions' tools and models,
// and its known human's lines to a human.
func TestReadGitAINotes(t *testing.T) {
	r := newRepo(t)
	var main strings.Builder
	for i := 1; i <= 50; i++ {
		main.WriteString("line " + strings.Repeat("x", i%7) + " of main " + itoa(i) + "\n")
	}
	r.write("src/main.rs", main.String())
	r.write("src/lib.rs", "pub fn lib() {}\npub fn two() {}\n")
	r.commit("rust")
	log := `src/main.rs
  s_0a1b2c3d4e5f60::t_11223344556677 1-10,15-20
  s_0a1b2c3d4e5f60::t_8899aabbccddee 25,30-35
  h_abcdef01234567 42-50
src/lib.rs
  00112233aabbccdd 1-2
---
{
  "schema_version": "authorship/3.0.0",
  "git_ai_version": "1.4.5",
  "base_commit_sha": "0000000000000000000000000000000000000000",
  "prompts": {
    "00112233aabbccdd": {
      "agent_id": {"tool": "cursor", "id": "old-conversation", "model": "gpt-4"},
      "human_author": "Dev <dev@example.com>",
      "total_additions": 2, "total_deletions": 0, "accepted_lines": 2, "overriden_lines": 0
    }
  },
  "humans": {"h_abcdef01234567": {"author": "Dev <dev@example.com>"}},
  "sessions": {
    "s_0a1b2c3d4e5f60": {
      "agent_id": {"tool": "claude", "id": "conv-123", "model": "claude-sonnet-4-5-20250514"},
      "human_author": "dev@example.com",
      "custom_attributes": {"team": "backend"}
    }
  }
}
`
	cmd := "notes --ref=" + NotesRef + " add -m"
	args := append(strings.Fields(cmd), log, "HEAD")
	r.git(args...)
	b := blamerOfNoSession()
	res, err := b.File(context.Background(), filepath.Join(r.dir, "src/main.rs"), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n           int
		kind, agent string
	}{{1, Agent, "git-ai"}, {10, Agent, "git-ai"}, {12, Human, ""}, {25, Agent, "git-ai"}, {31, Agent, "git-ai"}, {45, Human, ""}} {
		l := res.Lines[c.n-1]
		if l.Kind != c.kind || l.Agent != c.agent || c.kind == Agent && (l.Model != "claude-sonnet-4-5-20250514" || l.Conversation != "git-ai://claude/conv-123" || l.Source != "notes") {
			t.Errorf("main.rs:%d: %+v", c.n, l)
		}
	}
	if l := res.Lines[44]; l.Source != "notes" {
		t.Errorf("the known human's line is not from the note: %+v", l)
	}
	res, err = b.File(context.Background(), filepath.Join(r.dir, "src/lib.rs"), "")
	if err != nil {
		t.Fatal(err)
	}
	if l := res.Lines[0]; l.Kind != Agent || l.Model != "gpt-4" || l.Conversation != "git-ai://cursor/old-conversation" {
		t.Errorf("lib.rs:1 of a legacy prompt: %+v", l)
	}
}

// FuzzParseAuthorship: any note is read or refused in bounded time,
// never a panic, and what is read writes back to a log that reads the
// same.
func FuzzParseAuthorship(f *testing.F) {
	f.Add("src/a.go\n  s_0a1b2c3d4e5f60::t_11223344556677 1-3,7\n---\n{\"schema_version\":\"authorship/3.0.0\",\"base_commit_sha\":\"x\",\"prompts\":{}}\n")
	f.Add("\"a b.go\"\n  abcd1234abcd1234 2\n---\n{\"schema_version\":\"authorship/3.0.0\",\"prompts\":{\"abcd1234abcd1234\":{\"agent_id\":{\"tool\":\"cursor\",\"id\":\"i\",\"model\":\"m\"}}}}")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAuthorship(s)
		if err != nil {
			return
		}
		b, err := ParseAuthorship(a.String())
		if err != nil {
			t.Fatalf("a log written back does not read: %v\n%s", err, a.String())
		}
		if len(b.Files) != len(a.Files) {
			t.Fatalf("%d files read back, %d written", len(b.Files), len(a.Files))
		}
		a.Record("c", time.Now())
	})
}

// TestNotesAsGitAIWritesThem: loom's note of a commit has the fields
// git-ai's has, as git-ai fills them: base_commit_sha is the commit
// itself, git_ai_version names the writer and its version, and the
// session is named by the id its agent gave it, so that its key is the
// one git-ai gives the same conversation (its published example:
// cursor's session_123 is s_c9883b05a2487d).
func TestNotesAsGitAIWritesThem(t *testing.T) {
	if k := "s_" + hexOf("cursor:session_123", 14); k != "s_c9883b05a2487d" {
		t.Fatalf("git-ai's key of cursor's session_123: %s, want s_c9883b05a2487d", k)
	}
	gitAI, err := ParseAuthorship("src/main.rs\n  s_c9883b05a2487d::t_9f8e7d6c5b4a32 1-10\n---\n" +
		`{"schema_version": "authorship/3.0.0", "git_ai_version": "1.4.0", "base_commit_sha": "abc123", "prompts": {}, "humans": {},` +
		` "sessions": {"s_c9883b05a2487d": {"agent_id": {"tool": "cursor", "id": "session_123", "model": "gpt-4"}, "human_author": "alice@example.com"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	r := newRepo(t)
	r.write("README.md", "# notes\n")
	r.commit("start")
	native := "9c1e4b2a-51d4-4e0b-8a3e-2f6d7c8b9a01"
	r.session("cc", "claude-code").Key = "claude-code:" + native
	r.agentWrite("cc", "calc.go", "package calc\n\n// Add adds two numbers.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n")
	r.commit("add")
	head := strings.TrimSpace(r.git("rev-parse", "HEAD"))
	for _, version := range []string{"1.2.3", ""} {
		b := &Blamer{Store: r.st, Roots: r.st, Versions: r.st, Sessions: r.st, UserID: "local"}
		if n, err := b.Notes(context.Background(), Git{Dir: r.dir}, "HEAD", version); err != nil || n != 1 {
			t.Fatalf("notes written: %d, %v", n, err)
		}
		loomNote, err := ParseAuthorship(r.git("notes", "--ref="+NotesRef, "show", "HEAD"))
		if err != nil {
			t.Fatal(err)
		}
		m, g := loomNote.Meta, gitAI.Meta
		if m.SchemaVersion != g.SchemaVersion || m.BaseCommitSHA != head {
			t.Errorf("schema %q, base_commit_sha %q; want %q and the commit itself, %s", m.SchemaVersion, m.BaseCommitSHA, g.SchemaVersion, head)
		}
		if want := strings.TrimSpace("loom " + version); m.GitAIVersion != want {
			t.Errorf("git_ai_version %q, want %q", m.GitAIVersion, want)
		}
		key := "s_" + hexOf("claude:"+native, 14)
		s, ok := m.Sessions[key]
		if !ok || len(m.Sessions) != 1 {
			t.Fatalf("sessions %+v, want the one keyed %s", m.Sessions, key)
		}
		if s.AgentID != (AgentID{Tool: "claude", ID: native, Model: "m-cc"}) || s.CustomAttributes[attrSession] != r.ses["cc"].ID {
			t.Errorf("session record %+v", s)
		}
		if len(loomNote.Files) != 1 || len(loomNote.Files[0].Entries) != 1 || !strings.HasPrefix(loomNote.Files[0].Entries[0].Key, key+"::t_") {
			t.Errorf("attestations %+v", loomNote.Files)
		}
		r.git("notes", "--ref="+NotesRef, "remove", "HEAD")
	}
	// The note read back still names loom's session.
	b := &Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local"}
	if _, err := b.Notes(context.Background(), Git{Dir: r.dir}, "HEAD", "1.2.3"); err != nil {
		t.Fatal(err)
	}
	r.want(r.blame("calc.go"), map[string]string{"func Add": "agent:cc"})
}
