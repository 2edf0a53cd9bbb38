package icodemate

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// IcodeMate reads, in its own data directory, the database opencode
// 1.18.33 wrote, named as IcodeMate names its own: every session, under
// IcodeMate's name.
func TestReadsItsDatabase(t *testing.T) {
	f := Format{fork}
	home := t.TempDir()
	roots := f.Roots(nil, home)
	if len(roots) != 1 || roots[0] != filepath.Join(home, ".local", "share", "icodemate") {
		t.Fatalf("roots %v", roots)
	}
	importertest.MkdirAll(t, roots[0])
	importertest.WriteFile(t, filepath.Join(roots[0], "icodemate.db"), importertest.ReadBytes(t, filepath.Join("testdata", "icodemate.db")), 0o644)
	res := importertest.ReadAll(t, f, roots[0])
	if len(res.Sessions) == 0 {
		t.Fatal("no session read")
	}
	st := importertest.Store(t)
	rep := importertest.Import(t, st, f, roots[0])
	if f.Tool() != Tool || rep.Tool != Tool || rep.SessionsNew != len(res.Sessions) || len(rep.Problems) != 0 {
		t.Fatalf("import %+v", rep)
	}
	listed, err := st.Sessions(t.Context(), loom.SessionFilter{Surface: Tool})
	if err != nil || len(listed) != rep.SessionsNew {
		t.Errorf("%d sessions of surface %s, %v", len(listed), Tool, err)
	}
}
