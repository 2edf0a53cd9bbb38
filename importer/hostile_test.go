package importer_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/paths"
)

// evil is a format whose files name their sessions and messages with
// whatever a line says, as a hostile or broken tool's file may: one
// session a line, {"session": ID, "message": ID}.
type evil struct{}

func (evil) Tool() string                               { return "evil" }
func (evil) Provider() string                           { return "" }
func (evil) Roots(func(string) string, string) []string { return nil }

func (evil) Bundles(_ context.Context, root string) ([]importer.Bundle, error) {
	files, err := filepath.Glob(filepath.Join(root, "*.evil"))
	var out []importer.Bundle
	for _, f := range files {
		out = append(out, importer.Bundle{Files: []string{f}})
	}
	return out, err
}

func (evil) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	raw, err := os.ReadFile(b.Name())
	if err != nil {
		return nil, err
	}
	res := &importer.Result{}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var l struct{ Session, Message string }
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			return nil, err
		}
		m := &loom.Message{ID: l.Message, Role: loom.RoleUser, CreatedAt: at, Parts: []loom.Part{{ID: "p", Type: loom.PartText, Text: "hi"}}}
		res.Sessions = append(res.Sessions, &importer.Session{SourceID: l.Session, Path: b.Name(), Cwd: "/nowhere", CreatedAt: at, Messages: []*loom.Message{m}})
	}
	return res, nil
}

// Ids read from another tool's files are only ever data: each imported
// session gets a UUID of loom's own (which names its replay log), the
// source id is kept in the key when it makes one (one line, bounded),
// and a message id that is not one line of text is refused with a
// problem instead of being stored.
func TestForeignIDsNeverBecomePaths(t *testing.T) {
	fx := newFixture(t)
	lines := []string{}
	add := func(session, message string) {
		b, _ := json.Marshal(map[string]string{"session": session, "message": message})
		lines = append(lines, string(b))
	}
	stored := []string{"../../x", "../../../etc/passwd", `..\..\x`, "/abs/path", "a\x1b]0;title\x07"}
	for i, id := range stored {
		add(id, "m"+string(rune('a'+i)))
	}
	refused := []string{"x\ny", "", strings.Repeat("a", loom.MaxKeyLen)}
	for _, id := range refused {
		add(id, "m")
	}
	add("ok", "m\x1b[2J")
	add("ok2", "m\u009b31m")
	fx.write("s.evil", lines...)
	im := &importer.Importer{Store: fx.st, UserID: "alice", Now: func() time.Time { return fx.now.Add(time.Hour) }}
	rep, err := im.Run(context.Background(), []importer.Target{{Format: evil{}, Roots: []string{fx.dir}, Explicit: true}})
	if err != nil {
		t.Fatal(err)
	}
	tr := rep.Tools[0]
	got, err := fx.st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	dirs := paths.Dirs{State: t.TempDir()}
	for _, s := range got {
		if err := loom.ValidID(s.ID); err != nil {
			t.Errorf("session %q of key %q: id is not loom's: %v", s.ID, s.Key, err)
		}
		if p := dirs.SessionLog(s.UserID, s.ID); filepath.Dir(filepath.Dir(p)) != dirs.LogsDir() {
			t.Errorf("the replay log of %q is %s, outside %s", s.Key, p, dirs.LogsDir())
		}
		keys[s.Key] = true
	}
	for _, id := range stored {
		if !keys["evil:"+id] {
			t.Errorf("session %q was not imported with its key; have %v", id, keys)
		}
	}
	if len(got) != len(stored) {
		t.Errorf("%d sessions imported, want %d: %v", len(got), len(stored), keys)
	}
	if tr.ProblemCount != len(refused)+2 {
		t.Errorf("%d problems, want %d: %v", tr.ProblemCount, len(refused)+2, tr.Problems)
	}
}
