// Package importertest holds what the session format readers' tests
// share: counting what a session holds, finding sessions and messages in
// a reader's result, links, and a store to import into.
package importertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/sqlite"
)

// Tally is what a session holds: messages by role, tool parts by status,
// and agent, reasoning and file parts.
type Tally struct {
	Roles     map[string]int
	Tools     map[string]int
	Agents    int
	Reasoning int
	Files     int
}

// TallyOf counts what s holds.
func TallyOf(s *importer.Session) Tally {
	c := Tally{Roles: map[string]int{}, Tools: map[string]int{}}
	for _, m := range s.Messages {
		c.Roles[m.Role]++
		for _, p := range m.Parts {
			switch p.Type {
			case loom.PartTool:
				c.Tools[p.Status]++
			case loom.PartAgent:
				c.Agents++
			case loom.PartReasoning:
				c.Reasoning++
			case loom.PartFile:
				c.Files++
			}
		}
	}
	return c
}

// CheckValid checks what every reader's result must be, whatever its
// files held: each session's SourceID set, on one line and its own;
// each message valid, completed no earlier than created, its id and its
// parts' ids unique in the session, each part's id under its message's.
func CheckValid(t testing.TB, res *importer.Result) {
	t.Helper()
	sids := map[string]bool{}
	for _, s := range res.Sessions {
		if s.SourceID == "" || strings.ContainsAny(s.SourceID, "\n\r") || sids[s.SourceID] {
			t.Errorf("bad or repeated SourceID %q", s.SourceID)
		}
		sids[s.SourceID] = true
		ids := map[string]bool{}
		for _, m := range s.Messages {
			if err := m.Validate(); err != nil {
				t.Errorf("message %s: %v", m.ID, err)
			}
			if ids[m.ID] {
				t.Errorf("message id %s twice", m.ID)
			}
			ids[m.ID] = true
			if m.CompletedAt == nil || m.CompletedAt.Before(m.CreatedAt) {
				t.Errorf("message %s: completed %v before created %v", m.ID, m.CompletedAt, m.CreatedAt)
			}
			for _, p := range m.Parts {
				if ids[p.ID] {
					t.Errorf("part id %s twice", p.ID)
				}
				ids[p.ID] = true
				if !strings.HasPrefix(p.ID, m.ID+"/") {
					t.Errorf("part id %s not under message %s", p.ID, m.ID)
				}
			}
		}
	}
}

// Session is the session of res with source id id; the test fails,
// naming the ones there are, when there is none.
func Session(t testing.TB, res *importer.Result, id string) *importer.Session {
	t.Helper()
	var have []string
	for _, s := range res.Sessions {
		if s.SourceID == id {
			return s
		}
		have = append(have, s.SourceID)
	}
	t.Fatalf("no session %s among %v", id, have)
	return nil
}

// Message is the message of s with id id; the test fails when there is
// none.
func Message(t testing.TB, s *importer.Session, id string) *loom.Message {
	t.Helper()
	for _, m := range s.Messages {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("session %s has no message %s", s.SourceID, id)
	return nil
}

// Symlink makes a symbolic link name to target, and the directory it
// is in; the test is skipped where there are no links.
func Symlink(t testing.TB, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
}

// Store is a new SQLite store in a temporary directory, closed when the
// test ends.
func Store(t testing.TB) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "loom.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Import runs one import of f's sessions at roots into st as user
// "alice", and returns its report; an error of the run fails the test.
func Import(t testing.TB, st loom.Store, f importer.Format, roots ...string) *importer.ToolReport {
	t.Helper()
	im := &importer.Importer{Store: st, UserID: "alice"}
	rep, err := im.Run(context.Background(), []importer.Target{{Format: f, Roots: roots, Explicit: true}})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Tools[0]
}

// Check fails the test for anything in res that loom would not store: a
// session without an id, a message that is not valid.
func Check(t testing.TB, res *importer.Result) {
	t.Helper()
	for _, s := range res.Sessions {
		if s.SourceID == "" {
			t.Errorf("session without an id")
		}
		for _, m := range s.Messages {
			if err := m.Validate(); err != nil {
				t.Errorf("session %s message %s: %v", s.SourceID, m.ID, err)
			}
		}
	}
}

// CheckValidOf checks what every reader's result must be: each session's
// source id keys a session of tool and is unique in the result, its
// messages are valid, their ids unique, none completed before it was
// created, and part ids unique and under their message's id.
func CheckValidOf(t testing.TB, tool string, res *importer.Result) {
	t.Helper()
	for _, s := range res.Sessions {
		if loom.ValidKey(tool+":"+s.SourceID) != nil {
			t.Errorf("SourceID %q cannot key a session of %s", s.SourceID, tool)
		}
	}
	CheckValid(t, res)
}

// Roles is the roles of s's messages in order, separated by spaces.
func Roles(s *importer.Session) string {
	r := make([]string, 0, len(s.Messages))
	for _, m := range s.Messages {
		r = append(r, m.Role)
	}
	return strings.Join(r, " ")
}

// ReadFile reads the file at path with f, failing the test when it
// cannot, and checks the result (CheckValidOf).
func ReadFile(t testing.TB, f importer.Format, path string) *importer.Result {
	t.Helper()
	res, err := f.Read(context.Background(), importer.Bundle{Files: []string{path}})
	if err != nil {
		t.Fatalf("Read(%s): %v", path, err)
	}
	CheckValidOf(t, f.Tool(), res)
	return res
}

// ReadRoot reads every bundle f finds under root, failing the test when
// one cannot be read, checks each result (CheckValidOf), and returns
// them merged: sessions and problems in the order read, skipped counts
// added up. It checks that each result is what loom can store (Check);
// CheckValidOf of the merged result checks more.
func ReadRoot(t testing.TB, f importer.Format, root string) *importer.Result {
	t.Helper()
	bs, err := f.Bundles(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	all := &importer.Result{Skipped: map[string]int{}}
	for _, b := range bs {
		res, err := f.Read(context.Background(), b)
		if err != nil {
			t.Fatalf("Read(%s): %v", b.Name(), err)
		}
		Check(t, res)
		all.Sessions = append(all.Sessions, res.Sessions...)
		all.Problems = append(all.Problems, res.Problems...)
		for k, n := range res.Skipped {
			all.Skipped[k] += n
		}
	}
	return all
}
