package geminiapps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

var takeout = filepath.Join("testdata", "Takeout", "My Activity", "Gemini Apps", "MyActivity.html")

// sessionWith is the session of res whose prompt is prompt.
func sessionWith(t *testing.T, sessions []*importer.Session, prompt string) *importer.Session {
	t.Helper()
	for _, s := range sessions {
		if importertest.Texts(s, loom.RoleUser)[0] == prompt {
			return s
		}
	}
	t.Fatalf("no session of the prompt %q", prompt)
	return nil
}

// Takeout's layout: each Prompted record a session of its prompt and
// reply at the record's time (EDT), the reply's paragraphs, list and
// code as text, its script left out; Canvas, feedback and another
// product's records are counted as skipped.
func TestReadTakeout(t *testing.T) {
	res := importertest.ReadSessions(t, Format{}, filepath.Join("testdata", "Takeout"), 2)
	s := sessionWith(t, res.Sessions, "How do I round money in Go without floats?")
	if importertest.Roles(s) != "user assistant" || !s.CreatedAt.Equal(time.Date(2026, 10, 5, 13, 14, 3, 0, time.UTC)) {
		t.Fatalf("session %s at %v", importertest.Roles(s), s.CreatedAt)
	}
	want := "Keep amounts as integer cents and round only when you display them.\n\n- Store int64 cents.\n\n- Format with two decimals at the edge.\n\nfunc cents(d, c int64) int64 {\n    return d*100 + c\n}"
	if got := importertest.Texts(s, loom.RoleAssistant)[0]; got != want {
		t.Errorf("reply %q, want %q", got, want)
	}
	f := sessionWith(t, res.Sessions, `Translate "ledger" into French.`)
	importertest.CheckTexts(t, f, loom.RoleAssistant, "Grand livre.")
	if !f.CreatedAt.Equal(time.Date(2026, 10, 5, 3, 2, 17, 0, time.UTC)) {
		t.Errorf("time %v", f.CreatedAt)
	}
	if res.Skipped["activity:created"] != 1 || res.Skipped["activity:gave"] != 1 || res.Skipped["other-product"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

// agentsview's layout: the label and the time in the header, the
// content's first block the prompt and the rest the reply.
func TestReadHeaderLayout(t *testing.T) {
	res := importertest.ReadSessions(t, Format{}, filepath.Join("testdata", "header-layout"), 2)
	s := sessionWith(t, res.Sessions, "Name three sorting algorithms.")
	importertest.CheckTexts(t, s, loom.RoleAssistant, "Quicksort, merge sort & heapsort.")
	if !s.CreatedAt.Equal(time.Date(2026, 1, 2, 9, 34, 5, 0, time.UTC)) {
		t.Errorf("time %v", s.CreatedAt)
	}
	if res.Skipped["activity:feedback"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
}

// A later export holds the same records and newer ones: the records
// keep their ids, and only the new one is new.
func TestIDsHoldAcrossExports(t *testing.T) {
	ids := func(res []*importer.Session) map[string]bool {
		out := map[string]bool{}
		for _, s := range res {
			out[s.SourceID] = true
		}
		return out
	}
	before := ids(importertest.ReadFile(t, Format{}, takeout).Sessions)
	data := string(importertest.ReadBytes(t, takeout))
	cell := `<div class="outer-cell"><div class="header-cell"><p>Gemini Apps</p></div><div class="content-cell">Prompted&nbsp;And in Spanish?<br>Oct 6, 2026, 8:00:00&#8239;AM EDT<br><p>Libro mayor.</p></div></div>`
	later := filepath.Join(t.TempDir(), "MyActivity.html")
	importertest.WriteFile(t, later, []byte(strings.Replace(data, `<div class="mdl-grid">`, `<div class="mdl-grid">`+cell, 1)), 0o644)
	after := ids(importertest.ReadFile(t, Format{}, later).Sessions)
	if len(after) != 3 {
		t.Fatalf("%d sessions", len(after))
	}
	for id := range before {
		if !after[id] {
			t.Errorf("%s is not in the later export", id)
		}
	}
}

// An export in another language is one line: its prompts are not read.
func TestOtherLanguage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "MyActivity.html")
	page := `<html lang="de"><body><div class="outer-cell"><div class="header-cell"><p>Gemini Apps</p></div><div class="content-cell">Prompted&nbsp;Hallo<br>05.10.2026, 09:14:03 MESZ<br><p>Hallo!</p></div></div></body></html>`
	importertest.WriteFile(t, path, []byte(page), 0o644)
	res := importertest.ReadFile(t, Format{}, path)
	if len(res.Sessions) != 0 || len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Reason, "English") {
		t.Fatalf("sessions %d, problems %v", len(res.Sessions), res.Problems)
	}
	// And a page that is no activity at all is one line too.
	if err := os.WriteFile(path, []byte("<html><body><p>hello</p></body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := importertest.ReadFile(t, Format{}, path); len(res.Problems) != 1 {
		t.Fatalf("problems %v", res.Problems)
	}
}

func TestImportAndCount(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, filepath.Join("testdata", "Takeout"), 2, 4)
}

// It has no place of its own: the export is named.
func TestRoots(t *testing.T) {
	if roots := (Format{}).Roots(nil, "/home/u"); len(roots) != 0 {
		t.Errorf("roots %v", roots)
	}
	if got := importertest.BundlesUnder(t, Format{}, "testdata"); len(got) != 2 {
		t.Errorf("bundles %v", got)
	}
}

// The rule for bad input, record by record (docs/import.md, "One
// damaged record"): a prompt or reply made not UTF-8 is one problem
// line, the record kept (with U+FFFD where the bytes stood) under its
// id, the other records as they were.
func TestOneRecordNotUTF8(t *testing.T) {
	before := importertest.ReadFile(t, Format{}, takeout)
	for _, text := range []string{"round money", "Grand livre", "integer cents"} {
		data := strings.Replace(string(importertest.ReadBytes(t, takeout)), text, text[:3]+"\xff\xfe"+text[3:], 1)
		path := filepath.Join(t.TempDir(), "MyActivity.html")
		importertest.WriteFile(t, path, []byte(data), 0o644)
		after := importertest.ReadFile(t, Format{}, path)
		if len(after.Problems) != 1 || len(after.Sessions) != len(before.Sessions) {
			t.Fatalf("%q: problems %v, %d sessions", text, after.Problems, len(after.Sessions))
		}
		for i, s := range after.Sessions {
			if b := before.Sessions[i]; s.SourceID != b.SourceID || importertest.Roles(s) != importertest.Roles(b) {
				t.Errorf("%q: session %s %s, want %s %s", text, s.SourceID, importertest.Roles(s), b.SourceID, importertest.Roles(b))
			}
		}
	}
}
