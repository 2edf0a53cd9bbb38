package importer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
)

// A store hit by importers that raced before files had import locks —
// a session missing turns, nested SOURCE@… forks holding the file's
// messages again, duplicate ids, and the file recorded as read in full
// — is put back by --rescan (Importer.Rescan) as one clean import of
// the file makes it, on both engines; what only a fork holds stays, and
// a second rescan changes nothing.
func TestRescanRepairsRaceDamage(t *testing.T) {
	for _, e := range testEngines {
		for _, dupInMain := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/duplicates-in-main=%v", e.name, dupInMain), func(t *testing.T) {
				st := e.open(t)()
				t.Cleanup(func() { st.Close() })
				rescanRepairs(t, st, dupInMain)
			})
		}
	}
}

func rescanRepairs(t *testing.T, st loom.Engine, dupInMain bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const turns = 10
	dir := t.TempDir()
	root, turn := claudeGrowing(t, dir)
	targets := []importer.Target{{Format: claudecode.New(), Roots: []string{root}, Explicit: true}}
	run := func(rescan bool) *importer.ToolReport {
		t.Helper()
		rep, err := (&importer.Importer{Store: st, UserID: "alice", Rescan: rescan}).Run(ctx, targets)
		if err != nil {
			t.Fatal(err)
		}
		return rep.Tools[0]
	}
	// The session as the race left it: its first turns imported, ...
	for i := 1; i <= 3; i++ {
		turn(i)
	}
	run(false)
	for i := 4; i <= turns; i++ {
		turn(i)
	}
	files, _ := filepath.Glob(filepath.Join(root, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("source files %v", files)
	}
	res, err := claudecode.New().Read(ctx, importer.Bundle{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	src := res.Sessions[0]
	key := "claude-code:" + src.SourceID
	main := findKey(t, st, key)
	if dupInMain {
		// ... messages appended twice by two importers, ...
		copies := copyMessages(src.Messages[2:6])
		if err := st.Append(ctx, main, copies...); err != nil {
			t.Fatal(err)
		}
	}
	// ... forks of forks holding the file again, ...
	fork1 := strayFork(t, st, main, key+"@"+src.Messages[6].ID, src.Messages[:12])
	strayFork(t, st, fork1, fork1.Key+"@"+src.Messages[12].ID, src.Messages[:16])
	// ... one holding a message the file does not (it stays), ...
	only := copyMessages(src.Messages[:2])
	only = append(only, &loom.Message{ID: "only-in-a-fork", Role: loom.RoleUser, CreatedAt: src.Messages[1].CreatedAt.Add(time.Second),
		Parts: []loom.Part{{ID: "only-in-a-fork/0", Type: loom.PartText, Text: "kept"}}})
	kept := strayFork(t, st, main, key+"@only-in-a-fork", nil, only...)
	// ... and the file recorded as read as it is now.
	fi, err := os.Stat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RecordImportedFiles(ctx, []loom.ImportedFile{{UserID: "alice", Path: files[0], Tool: "claude-code", Bundle: files[0],
		Size: fi.Size(), ModTime: fi.ModTime().UTC(), SourceID: src.SourceID, SessionID: main.ID}}); err != nil {
		t.Fatal(err)
	}
	if tr := run(false); tr.FilesUnchanged != 1 || tr.MessagesAdded != 0 {
		t.Fatalf("a plain import of the damaged store: %+v, want the file unchanged", tr)
	}

	tr := run(true)
	if tr.FilesRead != 1 || tr.SessionsRepaired != 1 || tr.ForksMerged != 2 || len(tr.Problems) != 0 {
		t.Errorf("rescan: %d files read, %d sessions repaired, %d forks merged, problems %v; want 1, 1, 2, none",
			tr.FilesRead, tr.SessionsRepaired, tr.ForksMerged, tr.Problems)
	}
	got := storedSessions(t, st)
	if ids := got[kept.Key]; !slices.Contains(ids, "only-in-a-fork") {
		t.Errorf("the fork holding a message only it has is gone or changed: %v", ids)
	}
	delete(got, kept.Key)
	if k := findKey(t, st, kept.Key); k.ParentID != main.ID {
		t.Errorf("the kept fork's parent is %s, want the repaired session %s", k.ParentID, main.ID)
	}

	// One clean import of the file.
	ref := cleanImport(ctx, t, targets)
	want := storedSessions(t, ref)
	if len(want[key]) != 2*turns {
		t.Fatalf("a clean import stores %d messages, want %d", len(want[key]), 2*turns)
	}
	if len(got) != len(want) {
		t.Errorf("after the rescan %d sessions, want %d: %v", len(got), len(want), got)
	}
	for k, ids := range want {
		if !slices.Equal(got[k], ids) {
			t.Errorf("%s after the rescan:\n got %v\nwant %v", k, got[k], ids)
		}
	}
	repaired := findKey(t, st, key)
	clean := findKey(t, ref, key)
	if repaired.MessageCount != clean.MessageCount || repaired.TurnCount != clean.TurnCount || repaired.Usage != clean.Usage {
		t.Errorf("repaired session: %d messages, %d turns, usage %+v; a clean import: %d, %d, %+v",
			repaired.MessageCount, repaired.TurnCount, repaired.Usage, clean.MessageCount, clean.TurnCount, clean.Usage)
	}
	if hits, err := st.Search(ctx, loom.SearchQuery{UserID: "alice", Text: `"cc prompt 9"`}); err != nil || len(hits) == 0 {
		t.Errorf("a turn the race lost is not found after the rescan (%v)", err)
	}

	// A second rescan changes nothing.
	before := storedSessions(t, st)
	tr = run(true)
	if tr.SessionsRepaired != 0 || tr.ForksMerged != 0 || tr.MessagesAdded != 0 || tr.SessionsNew != 0 || tr.SessionsGrown != 0 {
		t.Errorf("a second rescan: %+v, want nothing changed", tr)
	}
	if after := storedSessions(t, st); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a second rescan changed the store:\n%v\n%v", before, after)
	}
	if tr := run(false); tr.FilesUnchanged != 1 {
		t.Errorf("a plain import after the rescan: %+v, want the file unchanged", tr)
	}
}

func findKey(t *testing.T, st loom.Store, key string) *loom.Session {
	t.Helper()
	ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Key: key})
	if err != nil || len(ss) != 1 {
		t.Fatalf("session %s: %d found (%v)", key, len(ss), err)
	}
	return ss[0]
}

// copyMessages are msgs as a store takes them anew.
func copyMessages(msgs []*loom.Message) []*loom.Message {
	out := make([]*loom.Message, len(msgs))
	for i, m := range msgs {
		c := *m
		c.Seq, c.SessionID = 0, ""
		out[i] = &c
	}
	return out
}

// strayFork imports a fork of parent keyed key, holding msgs, as an
// importer's fork of a session it took for rewound.
func strayFork(t *testing.T, st loom.Store, parent *loom.Session, key string, msgs []*loom.Message, more ...*loom.Message) *loom.Session {
	t.Helper()
	all := append(copyMessages(msgs), more...)
	x := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: key, Surface: "claude-code", Kind: loom.KindFork, ParentID: parent.ID,
		ForkTurn: 1, Source: parent.Source, Cwd: parent.Cwd, Project: parent.Project, CreatedAt: all[0].CreatedAt, UpdatedAt: all[len(all)-1].CreatedAt}
	for i, m := range all {
		m.Seq, m.SessionID = int64(i+1), x.ID
	}
	if err := st.Import(context.Background(), []*loom.SessionData{{Session: x, Messages: all}}); err != nil {
		t.Fatal(err)
	}
	return x
}
