package blame

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// TestKeptAnswerFollowsTheStore: a file blamed again with nothing
// changed is given the answer kept (no edit read, nothing matched), and
// the same as a blame without the cache; after each change of the store
// that bears on it — a session imported that wrote lines of the file, a
// session put in the trash, a part redacted that leaves the edit's line
// hashes but not its text, the file changed and not committed, a new
// commit — the answer is the new one, and then kept in its turn.
func TestKeptAnswerFollowsTheStore(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	r.agentWrite("one", "a.go", "package a\n\nfunc Agent() int {\n\treturn compute(1, \"agent\")\n}\n")
	r.commit("the agent's function")
	r.tick(time.Hour)
	human := "func Human() string {\n\treturn describe(\"written by hand at first\")\n}\n"
	r.write("a.go", r.read("a.go")+"\n"+human)
	r.commit("a human's function")
	committed := r.clock

	cache := t.TempDir()
	blame := func(what string, wantKept bool) *Result {
		t.Helper()
		return r.keptBlame(cache, "a.go", what, wantKept)
	}
	res := blame("the first blame", false)
	r.want(res, map[string]string{"compute(1": "agent:one", "describe(": "human"})
	blame("a repeat", true)

	// A session imported that wrote the human's function before it was
	// committed.
	two := r.session("two", "codex")
	at := committed.Add(-30 * time.Second)
	two.CreatedAt, two.UpdatedAt = at.Add(-time.Second), at
	in, _ := json.Marshal(map[string]string{"file_path": filepath.Join(r.dir, "a.go"), "old_string": "return compute(1, \"agent\")\n}",
		"new_string": "return compute(1, \"agent\")\n}\n\n" + strings.TrimSuffix(human, "\n")})
	msgs := []*loom.Message{
		{ID: loom.NewID(), Seq: 1, Role: loom.RoleUser, CreatedAt: at.Add(-time.Second), Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "add Human"}}},
		{ID: loom.NewID(), Seq: 2, Role: loom.RoleAssistant, Model: "m-two", CreatedAt: at, Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartTool,
			CallID: "c1", Name: "Edit", Status: loom.ToolCompleted, Input: in, Output: json.RawMessage(`"ok"`)}}},
	}
	if err := r.st.Import(ctx, []*loom.SessionData{{Session: two, Messages: msgs}}); err != nil {
		t.Fatal(err)
	}
	res = blame("after an import of a session that wrote lines of the file", false)
	r.want(res, map[string]string{"compute(1": "agent:one", "describe(": "agent:two"})
	blame("a repeat after the import", true)

	// That session in the trash.
	if _, err := r.st.Delete(ctx, two.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	res = blame("after the session was put in the trash", false)
	r.want(res, map[string]string{"compute(1": "agent:one", "describe(": "human"})
	blame("a repeat after the trash", true)

	// The first session's write redacted: the line it held is gone
	// from what it wrote.
	ms, err := r.st.Messages(ctx, r.ses["one"].ID, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var part loom.Part
	var seq int64
	for _, m := range ms {
		for _, p := range m.Parts {
			if p.Type == loom.PartTool {
				part, seq = p, m.Seq
			}
		}
	}
	redacted, _ := json.Marshal(map[string]string{"file_path": filepath.Join(r.dir, "a.go"), "content": "package a\n\nfunc Agent() int {\n\treturn [REDACTED]\n}\n"})
	part.Input = redacted
	if err := r.st.UpdatePart(ctx, r.ses["one"].ID, seq, part); err != nil {
		t.Fatal(err)
	}
	res = blame("after a redaction", false)
	r.want(res, map[string]string{"compute(1": "human", "func Agent": "agent:one"})
	blame("a repeat after the redaction", true)

	// The file changed and not committed is matched each time; a
	// commit gives an answer kept again.
	r.agentEdit("three", "claude-code", "a.go", "func Agent() int {", "// Agent computes.\nfunc Agent() int {")
	res = blame("a change not committed", false)
	r.want(res, map[string]string{"// Agent computes.": "agent:three"})
	blame("a change not committed, again", false)
	r.commit("the agent's comment")
	blame("after a commit", false)
	res = blame("a repeat after a commit", true)
	r.want(res, map[string]string{"// Agent computes.": "agent:three", "describe(": "human"})
}

// TestKeptAnswerDamaged: an answer kept whose file does not read back
// (a byte changed, cut short) is not given; the file is matched again
// and its answer kept anew.
func TestKeptAnswerDamaged(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	r.agentWrite("one", "a.go", "package a\n\nfunc Agent() int {\n\treturn compute(1, \"agent\")\n}\n")
	r.commit("the agent's function")
	cache := t.TempDir()
	blame := func() (*Result, int) {
		t.Helper()
		b := &Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local", Cache: cache}
		res, err := b.File(ctx, filepath.Join(r.dir, "a.go"), "")
		if err != nil {
			t.Fatal(err)
		}
		return res, b.ages.used.kept
	}
	first, _ := blame()
	name := (&ageCache{dir: cache}).answerName(r.dir, "a.go")
	for _, damage := range []func([]byte) []byte{
		func(b []byte) []byte { b[len(b)/2] ^= 1; return b },
		func(b []byte) []byte { return b[:len(b)-9] },
	} {
		if _, kept := blame(); kept != 1 {
			t.Fatalf("a repeat was not given the answer kept")
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, damage(b), 0o600); err != nil {
			t.Fatal(err)
		}
		res, kept := blame()
		if kept != 0 {
			t.Errorf("a damaged answer was given")
		}
		got, _ := json.Marshal(res)
		want, _ := json.Marshal(first)
		if string(got) != string(want) {
			t.Errorf("after a damaged answer:\n%s\nwant\n%s", got, want)
		}
	}
}

// TestKeptAnswerRootsOnThisMachine: an answer that rests on sessions
// recorded at another path (matched to this clone by its files) is
// matched again when git's index changes (the files it tracks told where
// that path was) and when that path becomes a work tree of this machine
// — here another repository's, whose sessions they then are: the lines
// are no longer this clone's agents'.
func TestKeptAnswerRootsOnThisMachine(t *testing.T) {
	r := newRepo(t)
	root := filepath.Join(t.TempDir(), "projects", "app")
	a := "package app\n\n// Start starts the application server.\nfunc Start() error {\n\treturn serve(listenAddress)\n}\n"
	b := "package app\n\n// Stop stops the application server.\nfunc Stop() error {\n\treturn shutdown(gracePeriod)\n}\n"
	r.elsewhereSession("s1", root, "internal/app/start.go", a)
	r.write("internal/app/start.go", a)
	r.elsewhereSession("s1", root, "internal/app/stop.go", b)
	r.write("internal/app/stop.go", b)
	r.commit("app")
	cache := t.TempDir()
	blame := func(what string, wantKept bool) *Result {
		t.Helper()
		return r.keptBlame(cache, "internal/app/start.go", what, wantKept)
	}
	r.want(blame("the first blame", false), map[string]string{"func Start": "agent:s1"})
	blame("a repeat", true)

	r.write("README.md", "# app\n")
	r.git("add", "README.md")
	blame("a file added to git's index", false)
	blame("a repeat after it", true)

	// The path the sessions were recorded at is now a work tree of
	// another repository on this machine.
	gittestInit(t, root)
	r.want(blame("the sessions' path now another repository's work tree", false), map[string]string{"func Start": "human"})
	blame("a repeat after it", true)
}

// gittestInit makes dir a git work tree with a first commit of its own.
func gittestInit(t *testing.T, dir string) {
	t.Helper()
	o := &repo{t: t, dir: dir, clock: time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)}
	o.write("other.txt", "another repository\n")
	o.git("init", "-q", "-b", "main")
	o.commit("another repository's first commit")
}

// keptBlame blames rel as a new process does, with the cache, and checks
// it against a blame without the cache and whether it was the answer
// kept (wantKept).
func (r *repo) keptBlame(cache, rel, what string, wantKept bool) *Result {
	r.t.Helper()
	ctx := context.Background()
	b := &Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local", Cache: cache}
	res, err := b.File(ctx, filepath.Join(r.dir, rel), "")
	if err != nil {
		r.t.Fatal(err)
	}
	if kept := b.ages.used.kept == 1; kept != wantKept {
		r.t.Errorf("%s: the answer kept given again = %v, want %v", what, kept, wantKept)
	}
	fresh, err := (&Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local"}).File(ctx, filepath.Join(r.dir, rel), "")
	if err != nil {
		r.t.Fatal(err)
	}
	got, _ := json.Marshal(res)
	want, _ := json.Marshal(fresh)
	if string(got) != string(want) {
		r.t.Fatalf("%s: blamed with the answer kept:\n%s\nmatched anew:\n%s", what, got, want)
	}
	return res
}
