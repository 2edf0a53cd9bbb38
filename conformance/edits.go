package conformance

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
)

// editCall is a completed tool call of an agent's.
func editCall(id, name, input string) loom.Part {
	return loom.Part{ID: id, Type: loom.PartTool, CallID: "call-" + id, Name: name, Status: loom.ToolCompleted,
		Input: json.RawMessage(input), Output: json.RawMessage(`"ok"`)}
}

// editsOf brings st's edit index up to date and reads what q selects.
func editsOf(t *testing.T, st loom.Engine, q loom.EditQuery) []loom.FileEdit {
	t.Helper()
	if _, err := fileedit.Index(ctx(t), st); err != nil {
		t.Fatal(err)
	}
	got, err := st.Edits(ctx(t), q)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func sortedSummary(es []loom.FileEdit) []string {
	s := editSummary(es)
	slices.Sort(s)
	return s
}

func editSummary(es []loom.FileEdit) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Op+" "+e.Path+" "+e.Tool)
	}
	return out
}

// The edit index holds the file changes of the tool calls a store
// holds, appended or imported, with their session, turn, model and
// agent; relative paths resolved against the session's directory; a
// message that forks share once, in the session it was made in; a
// part rewritten (a redaction) read again; gone with the session; and
// each user's own only.
func testEditIndex(t *testing.T, open Opener) {
	st := open(t)
	s := newSession("alice", "cli:api")
	reply := &loom.Message{Role: loom.RoleAssistant, Model: "claude-x", Provider: "anthropic", Parts: []loom.Part{
		{ID: "t0", Type: loom.PartText, Text: "Writing the files."},
		editCall("w1", "Write", `{"file_path":"/src/api/a.go","content":"package api\n\nfunc A() int { return 1 }\n"}`),
		editCall("e1", "Edit", `{"file_path":"b.go","old_string":"func B() {}","new_string":"func B() {}\n\nfunc C() {}"}`),
		editCall("s1", "Bash", `{"command":"sed -i 's/x/y/' c.go"}`),
		{ID: "f1", Type: loom.PartTool, CallID: "call-f1", Name: "Write", Status: loom.ToolError, Error: "denied",
			Input: json.RawMessage(`{"file_path":"/src/api/d.go","content":"x"}`)},
	}}
	mustAppend(t, st, s, text(loom.RoleUser, "write the api"), reply)

	checkEditsRead(t, st, s, reply)

	// A fork reads the message: the edit is still the session's, once.
	fork, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, st, fork, text(loom.RoleUser, "more"), &loom.Message{Role: loom.RoleAssistant, Model: "claude-x", Parts: []loom.Part{
		editCall("w2", "Write", `{"file_path":"/src/api/a.go","content":"package api\n"}`)}})
	got := editsOf(t, st, loom.EditQuery{UserID: "alice", Paths: []string{"/src/api/a.go"}})
	if len(got) != 2 || got[0].SessionID != s.ID || got[1].SessionID != fork.ID || got[1].Turn != 2 {
		t.Errorf("edits of a.go after the fork: %+v", got)
	}
	if one := editsOf(t, st, loom.EditQuery{UserID: "alice", SessionID: fork.ID, Paths: []string{"/src/api/a.go"}}); len(one) != 2 {
		t.Errorf("the fork's edits of a.go: %d, want the two it reads", len(one))
	}

	// A part rewritten is read again.
	p := reply.Parts[1]
	p.Input = json.RawMessage(`{"file_path":"/src/api/a.go","content":"package [REDACTED]\n"}`)
	if err := st.UpdatePart(ctx(t), s.ID, 2, p); err != nil {
		t.Fatal(err)
	}
	got = editsOf(t, st, loom.EditQuery{UserID: "alice", Paths: []string{"/src/api/a.go"}, SessionID: s.ID})
	if len(got) != 1 || !slices.Equal(got[0].Lines, fileedit.Hashes([][]string{{"package [REDACTED]"}})) {
		t.Errorf("after the part was rewritten: %+v", got)
	}

	// An import is indexed too, with the agent it came from.
	imp, at := importPatch(t, st)
	got = editsOf(t, st, loom.EditQuery{UserID: "alice", Paths: []string{"/src/api/web/x.ts"}})
	if len(got) != 1 || got[0].Agent != "codex" || got[0].Model != "gpt-x" || !got[0].At.Equal(at.Add(time.Second)) || got[0].Op != loom.EditWrite {
		t.Errorf("the imported patch's edit: %+v", got)
	}

	// Trash hides a session's edits; purging removes them.
	if _, err := st.Delete(ctx(t), imp.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := len(editsOf(t, st, loom.EditQuery{UserID: "alice", Paths: []string{"/src/api/web/x.ts"}})); n != 0 {
		t.Errorf("%d edits of a session in the trash", n)
	}
	if n := len(editsOf(t, st, loom.EditQuery{UserID: "alice", Paths: []string{"/src/api/web/x.ts"}, Trashed: true})); n != 1 {
		t.Errorf("%d edits of a session in the trash, asked for", n)
	}
	if _, err := st.Delete(ctx(t), imp.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if n := len(editsOf(t, st, loom.EditQuery{UserID: "alice", Paths: []string{"/src/api/web/x.ts"}, Trashed: true})); n != 0 {
		t.Errorf("%d edits of a purged session", n)
	}
	roots, err := st.ProjectRoots(ctx(t), "alice", "0123456789abcdef")
	if err != nil || !slices.Equal(roots, []string{"/src/api"}) {
		t.Errorf("ProjectRoots = %q, %v", roots, err)
	}
}

// checkEditsRead: the reply's write and edit read back by path, under a
// directory with their parts, bare, and for no one else.
func checkEditsRead(t *testing.T, st loom.Engine, s *loom.Session, reply *loom.Message) {
	got := editsOf(t, st, loom.EditQuery{UserID: "alice", Paths: []string{"/src/api/a.go", "/src/api/b.go"}})
	if want := []string{"write /src/api/a.go Write", "edit /src/api/b.go Edit"}; !slices.Equal(editSummary(got), want) {
		t.Fatalf("edits of a.go and b.go = %q, want %q", editSummary(got), want)
	}
	w := got[0]
	if w.SessionID != s.ID || w.MessageID != reply.ID || w.Seq != 2 || w.Turn != 1 || w.Model != "claude-x" || w.Provider != "anthropic" ||
		w.Agent != "loom" || w.PartID != "w1" || w.At.IsZero() {
		t.Errorf("the write's edit = %+v", w)
	}
	if want := fileedit.Hashes([][]string{{"package api", "", "func A() int { return 1 }"}}); !slices.Equal(w.Lines, want) {
		t.Errorf("the write's lines = %x, want %x", w.Lines, want)
	}
	if want := fileedit.Hashes([][]string{{"", "func C() {}"}}); !slices.Equal(got[1].Lines, want) {
		t.Errorf("the edit's lines = %x, want %x", got[1].Lines, want)
	}
	under := editsOf(t, st, loom.EditQuery{UserID: "alice", Under: "/src/api/", Parts: true})
	if want := []string{"write /src/api/a.go Write", "edit /src/api/b.go Edit", "shell /src/api/c.go Bash"}; !slices.Equal(editSummary(under), want) {
		t.Errorf("edits under /src/api = %q, want %q", editSummary(under), want)
	}
	if c, ok := fileedit.ChangeOf(&under[0]); !ok || c.Content != "package api\n\nfunc A() int { return 1 }\n" {
		t.Errorf("the write read back from its parts: %+v, %v", c, ok)
	}
	if bare := editsOf(t, st, loom.EditQuery{Under: "/src/api", Bare: true}); !slices.Equal(sortedSummary(bare), sortedSummary(under)) ||
		!slices.Equal(bare[0].Lines, under[0].Lines) && !slices.Equal(bare[1].Lines, under[0].Lines) && !slices.Equal(bare[2].Lines, under[0].Lines) {
		t.Errorf("bare edits under /src/api = %q, want %q", editSummary(bare), editSummary(under))
	}
	// Their paths alone.
	if paths := editsOf(t, st, loom.EditQuery{Dirs: []string{"/src/api"}, Bare: true, PathsOnly: true}); len(paths) != len(under) {
		t.Errorf("%d paths under /src/api, want %d", len(paths), len(under))
	} else {
		var got, want []string
		for i := range paths {
			got, want = append(got, paths[i].Path), append(want, under[i].Path)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("paths under /src/api = %q, want %q", got, want)
		}
	}
	// Several directories at once, with and without their sessions: a
	// prefix of a name is no directory.
	for _, bare := range []bool{false, true} {
		dirs := editsOf(t, st, loom.EditQuery{UserID: "alice", Dirs: []string{"/src/ap", "/src/api/", "/nowhere"}, Bare: bare})
		if !slices.Equal(sortedSummary(dirs), sortedSummary(under)) {
			t.Errorf("edits under /src/ap, /src/api and /nowhere (bare %v) = %q, want %q", bare, sortedSummary(dirs), sortedSummary(under))
		}
	}
	if n := len(editsOf(t, st, loom.EditQuery{UserID: "alice", Under: "/src/ap"})); n != 0 {
		t.Errorf("%d edits under /src/ap, a prefix of a name only", n)
	}
	if n := len(editsOf(t, st, loom.EditQuery{UserID: "bob", Under: "/src"})); n != 0 {
		t.Errorf("bob sees %d of alice's edits", n)
	}
	if _, err := st.Edits(ctx(t), loom.EditQuery{UserID: "alice"}); loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("a query of nothing: %v", err)
	}
}

// importPatch imports a Codex session of alice's, made at at, whose
// reply (a second after it) adds web/x.ts by apply_patch.
func importPatch(t *testing.T, st loom.Store) (imp *loom.Session, at time.Time) {
	t.Helper()
	imp = newSession("alice", "")
	imp.Source = &loom.Source{Tool: "codex", Path: "/x/rollout.jsonl"}
	at = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	imp.CreatedAt, imp.UpdatedAt = at, at
	msgs := []*loom.Message{text(loom.RoleUser, "patch it"), {Role: loom.RoleAssistant, Model: "gpt-x", Parts: []loom.Part{
		editCall("p1", "apply_patch", `{"input":"*** Begin Patch\n*** Add File: web/x.ts\n+export const x = 1;\n*** End Patch"}`)}}}
	for i, m := range msgs {
		m.ID, m.Seq, m.CreatedAt = loom.NewID(), int64(i+1), at.Add(time.Duration(i)*time.Second)
		for j := range m.Parts {
			if m.Parts[j].ID == "" {
				m.Parts[j].ID = loom.NewID()
			}
		}
	}
	if err := st.Import(ctx(t), []*loom.SessionData{{Session: imp, Messages: msgs}}); err != nil {
		t.Fatal(err)
	}
	return imp, at
}

// The edit index's version (loom.EditVersioner, what loom blame keeps
// its answer for a file under) changes with each change an edit query
// or a project-root query would show — a new edit indexed, a part
// rewritten (a redaction), a fork, a rewind, the trash and back, a
// purge, an import, a session moved to another project — and stays as
// it was for what no edit query shows: a reply with no tool call, a
// title.
func testEditVersion(t *testing.T, open Opener) {
	st := open(t)
	version := func() string {
		t.Helper()
		if _, err := fileedit.Index(ctx(t), st); err != nil {
			t.Fatal(err)
		}
		v, err := st.EditVersion(ctx(t))
		if err != nil || v == "" {
			t.Fatalf("EditVersion = %q, %v", v, err)
		}
		return v
	}
	seen := map[string]string{}
	last := version()
	seen[last] = "the empty store"
	changed := func(what string) {
		t.Helper()
		v := version()
		if v == last {
			t.Errorf("%s left the edit index's version as it was", what)
		}
		if by, ok := seen[v]; ok && v != last {
			t.Errorf("%s gave the version %s had", what, by)
		}
		seen[v], last = what, v
	}
	same := func(what string) {
		t.Helper()
		if v := version(); v != last {
			t.Errorf("%s changed the edit index's version", what)
			last = v
		}
	}

	s := newSession("alice", "")
	reply := &loom.Message{Role: loom.RoleAssistant, Model: "claude-x", Parts: []loom.Part{
		editCall("w1", "Write", `{"file_path":"/src/api/a.go","content":"package api\n\nfunc A() int { return 1 }\n"}`)}}
	mustAppend(t, st, s, text(loom.RoleUser, "write it"), reply)
	changed("a session's first edit, indexed")
	mustAppend(t, st, s, text(loom.RoleUser, "thanks"), text(loom.RoleAssistant, "done"))
	same("a reply with no tool call")
	title := "the api"
	if _, err := st.UpdateSession(ctx(t), s.ID, loom.SessionUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	same("a new title")
	mustAppend(t, st, s, text(loom.RoleUser, "more"), &loom.Message{Role: loom.RoleAssistant, Model: "claude-x", Parts: []loom.Part{
		editCall("e1", "Edit", `{"file_path":"/src/api/a.go","old_string":"return 1","new_string":"return 2"}`)}})
	changed("an edit appended")

	// A redaction that leaves the edit's lines as they were (its
	// old_string) still changes it: the edit's text is read from the
	// part.
	p := reply.Parts[0]
	p.Input = json.RawMessage(`{"file_path":"/src/api/a.go","content":"package api\n\nfunc A() int { return 1 }\n","note":"[REDACTED]"}`)
	if err := st.UpdatePart(ctx(t), s.ID, 2, p); err != nil {
		t.Fatal(err)
	}
	changed("a part rewritten")

	fork, err := st.Fork(ctx(t), s.ID, loom.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changed("a fork")
	if _, err := st.Delete(ctx(t), s.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	changed("a session put in the trash")
	if err := st.Restore(ctx(t), s.ID); err != nil {
		t.Fatal(err)
	}
	changed("a session restored from the trash")
	moved := loom.Project{ID: "fedcba9876543210", Name: "api2", Root: "/src/api2"}
	if _, err := st.UpdateSession(ctx(t), fork.ID, loom.SessionUpdate{Project: &moved, KeepUpdatedAt: true}); err != nil {
		t.Fatal(err)
	}
	changed("a session moved to another project")
	if _, err := st.Rewind(ctx(t), s.ID, loom.RewindOptions{Turn: 1}); err != nil {
		t.Fatal(err)
	}
	changed("a rewind")

	imp, _ := importPatch(t, st)
	changed("an import")
	if _, err := st.Delete(ctx(t), imp.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	changed("a purge")
}
