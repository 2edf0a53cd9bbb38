package importer_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/importer/importertest"
	"github.com/loomhq/loom/importer/opencode"
)

// copies is what an import stored for user: each session as its id,
// key, kind and parent, then its messages' ids, sorted by key.
func copies(t *testing.T, st loom.Store, user string) []string {
	t.Helper()
	ctx := context.Background()
	ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, Archived: loom.WithArchived, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range ss {
		msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(msgs))
		for i, m := range msgs {
			if m.ID == "" {
				t.Errorf("session %s: message %d has no id", s.Key, m.Seq)
			}
			ids[i] = m.ID
		}
		out = append(out, fmt.Sprintf("%s %s %s parent=%s messages=%s", s.Key, s.ID, s.Kind, s.ParentID, strings.Join(ids, ",")))
	}
	slices.Sort(out)
	return out
}

// The same source files imported into two stores give the same session
// ids (derived from the tool, the source session and its start) and the
// same message ids (the source's own), for every tool: what lets sync
// hold one session where two machines imported one source.
func TestImportedIDsSameInEveryStore(t *testing.T) {
	for _, c := range []struct {
		name string
		f    importer.Format
		root string
	}{
		{"claude-code", claudecode.Format{}, "../testdata/agent-sessions/claude-code"},
		{"codex", codex.Format{}, "codex/testdata"},
		{"gemini", gemini.Format{}, "gemini/testdata/tmp"},
		{"opencode", opencode.Format{}, "opencode/testdata/data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := importertest.Store(t), importertest.Store(t)
			if tr := importertest.Import(t, a, c.f, c.root); tr.SessionsNew == 0 {
				t.Fatalf("nothing imported from %s: %+v", c.root, tr)
			}
			importertest.Import(t, b, c.f, c.root)
			ga, gb := copies(t, a, "alice"), copies(t, b, "alice")
			if !slices.Equal(ga, gb) {
				t.Fatalf("two stores hold different copies:\n%s\n--\n%s", strings.Join(ga, "\n"), strings.Join(gb, "\n"))
			}
		})
	}
}

// A store that imported a shorter copy of a file first, and the whole
// file later, holds the sessions under the ids a store that imported the
// whole file at once gives them; a second user of the same store, and a
// copy imported again after its first one went to the trash, get ids of
// their own.
func TestImportedIDsGrowingFile(t *testing.T) {
	const dir = "../testdata/agent-sessions/claude-code/spotter"
	const sid = "258c7280-ae70-4798-800f-63464d01a85d"
	whole := t.TempDir()
	if err := os.CopyFS(whole, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	raw := importertest.ReadBytes(t, filepath.Join(whole, sid+".jsonl"))
	lines := bytes.SplitAfter(raw, []byte("\n"))
	short := t.TempDir()
	if err := os.CopyFS(short, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	importertest.WriteFile(t, filepath.Join(short, sid+".jsonl"), bytes.Join(lines[:len(lines)/2], nil), 0o644)

	a, b := importertest.Store(t), importertest.Store(t)
	importertest.Import(t, a, claudecode.Format{}, whole)
	importertest.Import(t, b, claudecode.Format{}, short)
	// The whole file at the shorter copy's place, as a tool writes on.
	importertest.WriteFile(t, filepath.Join(short, sid+".jsonl"), raw, 0o644)
	if tr := importertest.Import(t, b, claudecode.Format{}, short); tr.SessionsGrown == 0 {
		t.Fatalf("the grown file added nothing: %+v", tr)
	}
	ga, gb := copies(t, a, "alice"), copies(t, b, "alice")
	if !slices.Equal(ga, gb) {
		t.Fatalf("imported whole and grown differ:\n%s\n--\n%s", strings.Join(ga, "\n"), strings.Join(gb, "\n"))
	}

	// Another user of the store imports the same files beside alice's.
	ctx := context.Background()
	bob := &importer.Importer{Store: a, UserID: "bob"}
	if _, err := bob.Run(ctx, []importer.Target{{Format: claudecode.Format{}, Roots: []string{whole}, Explicit: true}}); err != nil {
		t.Fatal(err)
	}
	if gbob := copies(t, a, "bob"); len(gbob) != len(ga) || gbob[0] == ga[0] {
		t.Fatalf("bob's copies: %v", gbob)
	}
	if !slices.Equal(copies(t, a, "alice"), ga) {
		t.Fatal("bob's import changed alice's")
	}

	// A copy in the trash is not found again: its source, grown,
	// comes back as a new copy, under an id of its own.
	key := claudecode.Tool + ":" + sid
	ss, err := a.Sessions(ctx, loom.SessionFilter{UserID: "alice", Key: key, Archived: loom.WithArchived})
	if err != nil || len(ss) != 1 {
		t.Fatalf("the copy of %s: %v, %v", key, ss, err)
	}
	first := ss[0]
	if _, err := a.Delete(ctx, first.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(whole, sid+".jsonl"), later, later); err != nil {
		t.Fatal(err)
	}
	if tr := importertest.Import(t, a, claudecode.Format{}, whole); tr.SessionsNew == 0 || tr.FilesFailed != 0 || len(tr.Problems) != 0 {
		t.Fatalf("import after the copy went to the trash: %+v", tr)
	}
	ss, err = a.Sessions(ctx, loom.SessionFilter{UserID: "alice", Key: key, Archived: loom.WithArchived})
	if err != nil || len(ss) != 1 || ss[0].ID == first.ID {
		t.Fatalf("the copy after the trash: %v, %v", ss, err)
	}
}

// An imported session's id is a UUIDv7 made of its user, key and start
// alone.
func TestSessionID(t *testing.T) {
	at := time.Date(2026, 5, 1, 10, 0, 0, 123e6, time.UTC)
	id := importer.SessionID("alice", "claude-code:abc", at)
	if err := loom.ValidID(id); err != nil {
		t.Fatal(err)
	}
	if id != importer.SessionID("alice", "claude-code:abc", at) {
		t.Fatal("two ids for one source")
	}
	if id[14] != '7' || id[:13] != loom.NewIDAt(at)[:13] {
		t.Errorf("id %s is not a UUIDv7 of %v", id, at)
	}
	for _, other := range []string{
		importer.SessionID("bob", "claude-code:abc", at),
		importer.SessionID("alice", "codex:abc", at),
		importer.SessionID("alice", "claude-code:abc@m1", at),
		importer.SessionID("alice", "claude-code:abc", at.Add(time.Millisecond)),
	} {
		if other == id {
			t.Errorf("%s is the id of another source too", id)
		}
	}
	if z := importer.SessionID("alice", "claude-code:abc", time.Time{}); loom.ValidID(z) != nil || !strings.HasPrefix(z, "00000000-0000-7") {
		t.Errorf("id without a start: %s", z)
	}
	// Every version of loom derives the same id from the same source, so
	// that machines on different versions hold one session: these are
	// the ids earlier versions gave.
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 2, 11, 9, 30, 0, 0, time.UTC), "019c4c09-3dc0-78b0-b991-dfc408902a47"},
		{time.Time{}, "00000000-0000-78b0-b991-dfc408902a47"},
	} {
		if got := importer.SessionID("alice", "claude-code:abc", c.at); got != c.want {
			t.Errorf("SessionID at %v = %s, earlier versions gave %s", c.at, got, c.want)
		}
	}
}
