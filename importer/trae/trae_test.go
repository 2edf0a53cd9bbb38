package trae

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var root = filepath.Join("testdata", "User")

// A workspace's database: an answer kept only as its plan reads as the
// plan's items, the system message is skipped, a message's own model
// stands; the folder of workspace.json is the working directory. The
// global database holds no chat.
func TestRead(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, root, 2, "a7c3e1f0-5b2d-4c8e-9f1a-0d6b4e2c8a71", "user assistant assistant")
	if s.Cwd != "/home/u/shop-api" || s.Model != "doubao-seed-1.6" {
		t.Fatalf("session %q %q", s.Cwd, s.Model)
	}
	importertest.CheckTexts(t, s, loom.RoleAssistant, "Read the orders handler\nAdd page and per_page parameters", "Done: GET /orders takes page and per_page, 50 by default.")
	if s.Messages[1].Model != "doubao-seed-1.6" || s.Messages[2].Model != "deepseek-v3.1" {
		t.Errorf("models %q %q", s.Messages[1].Model, s.Messages[2].Model)
	}
	if want := time.UnixMilli(1791277210000).UTC(); !s.Messages[1].CreatedAt.Equal(want) {
		t.Errorf("answer at %v, want %v", s.Messages[1].CreatedAt, want)
	}
	if res.Skipped["unknown:system"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
	other := importertest.Session(t, res, "0b9d2f4a-6c1e-4a3b-8d5f-7e2c1a9b3d60")
	if importertest.Roles(other) != "user assistant" || !other.Messages[1].CreatedAt.Equal(time.Date(2026, 10, 7, 9, 0, 4, 0, time.UTC)) {
		t.Errorf("second session %s at %v", importertest.Roles(other), other.Messages[1].CreatedAt)
	}
}

func TestImport(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, root, 2, 5)
	importertest.RefusesOtherDB(t, Format{}, stateDB)
}

// Its places: the user directories of Trae's three editions;
// $LOOM_TRAE_DIR replaces them.
func TestRoots(t *testing.T) {
	roots := Format{}.Roots(importertest.Getenv("XDG_CONFIG_HOME", ""), "/home/u")
	if len(roots) != 3 || roots[0] != filepath.Join("/home/u", ".config", "Trae", "User") {
		t.Errorf("roots %v", roots)
	}
	if got := (Format{}).Roots(importertest.Getenv("LOOM_TRAE_DIR", "/x/trae"), "/home/u"); len(got) != 1 || got[0] != "/x/trae" {
		t.Errorf("with $LOOM_TRAE_DIR: %v", got)
	}
}
