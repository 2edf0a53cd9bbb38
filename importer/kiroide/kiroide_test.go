package kiroide

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var root = filepath.Join("testdata", "kiro.kiroagent")

// The later layout: the first answer is its run's log (a read and an
// edit, each completed, then what it said), not the prompt log's
// words; the second is its own content; the tool message adds none;
// the title and workspace are the session's.
func TestReadSession(t *testing.T) {
	_, s := importertest.ReadSession(t, Format{}, root, 2, "7d0c9a4e-2b1f-4c55-8e3a-6f1d2c9b0a11", "user assistant user assistant")
	if s.Title != "Add a price filter" || s.Cwd != "/home/u/shop" {
		t.Fatalf("session %q %q", s.Title, s.Cwd)
	}
	p := s.Messages[1].Parts
	if len(p) != 3 || p[0].Name != "readCode" || p[1].Name != "replace" || p[1].Status != loom.ToolCompleted ||
		!strings.Contains(string(p[1].Input), "max_price") || p[2].Text != "Added max_price to list_products." {
		t.Errorf("first answer %+v", p)
	}
	importertest.CheckTexts(t, s, loom.RoleUser, "Add a max_price filter to the product list.", "Thanks. Is it tested?")
	if got := s.Messages[3].Parts; len(got) != 1 || got[0].Text != "Not yet." {
		t.Errorf("second answer %+v", got)
	}
}

// The earlier layout: Kiro's instructions and their acknowledgement are
// no conversation, the wrapper is taken off, the tool message adds
// nothing; the chat's start and end date its messages.
func TestReadChat(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, root, 2, "c0ffee00c0ffee00c0ffee00c0ffee00:9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d", "user assistant")
	importertest.CheckTexts(t, s, loom.RoleUser, "Why does the checkout test fail?")
	if s.Model != "claude-sonnet-4" || s.Messages[1].Model != "claude-sonnet-4" {
		t.Errorf("model %q %q", s.Model, s.Messages[1].Model)
	}
	start, end := time.UnixMilli(1779012000000).UTC(), time.UnixMilli(1779012042000).UTC()
	if !s.Messages[0].CreatedAt.Equal(start) || !s.Messages[1].CreatedAt.Equal(end) {
		t.Errorf("times %v %v", s.Messages[0].CreatedAt, s.Messages[1].CreatedAt)
	}
	if res.Skipped["instructions"] != 1 || res.Skipped["tool"] < 2 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, root, 2, 6)
	importertest.RefusesFile(t, Format{}, "broken.chat", `{"chat": [`, "not the Kiro IDE's chat")
	importertest.RefusesFile(t, Format{}, "other.chat", `{"messages": []}`, "no chat in it")
	importertest.RefusesFile(t, Format{}, "broken.json", `{"history": [`, "not the Kiro IDE's session")
}

// Its place is the extension's global storage in Kiro's user
// directory; $LOOM_KIRO_IDE_DIR replaces it.
func TestRoots(t *testing.T) {
	home := t.TempDir()
	roots := Format{}.Roots(importertest.Getenv("XDG_CONFIG_HOME", ""), home)
	want := filepath.Join("Kiro", "User", "globalStorage", "kiro.kiroagent")
	if len(roots) == 0 || !strings.HasSuffix(roots[0], want) || !strings.HasPrefix(roots[0], home) {
		t.Errorf("roots %v", roots)
	}
	if got := (Format{}).Roots(importertest.Getenv("LOOM_KIRO_IDE_DIR", "/x/kiro"), home); len(got) != 1 || got[0] != "/x/kiro" {
		t.Errorf("with $LOOM_KIRO_IDE_DIR: %v", got)
	}
}
