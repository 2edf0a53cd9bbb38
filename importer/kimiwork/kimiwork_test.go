package kimiwork

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var sessions = filepath.Join("testdata", "sessions")

// A conversation of two turns: a step of reasoning and a Bash call, its
// usage at the step's end; a step of text whose usage a usage.record
// after it gives; a Read that failed, and the reply after it; a steer
// that is a prompt. The app's title session beside it is no
// conversation; a record of a type this reader does not know is
// counted as skipped.
func TestRead(t *testing.T) {
	res, s := importertest.ReadSession(t, Format{}, sessions, 1, "conv-7f3a9c21/main",
		"user assistant assistant user assistant assistant user")
	if s.Cwd != "/home/u/site" || s.Model != "kimi-k2.6" || res.Skipped["hook.fired"] != 1 {
		t.Errorf("cwd %q model %q skipped %v", s.Cwd, s.Model, res.Skipped)
	}
	m := s.Messages
	p := m[1].Parts
	if len(p) != 2 || p[0].Type != loom.PartReasoning || p[1].Name != "Bash" || p[1].Status != loom.ToolCompleted ||
		string(p[1].Output) != `"2 notes.txt"` || string(p[1].Input) != `{"command":"wc -l notes.txt"}` {
		t.Errorf("first step %+v", p)
	}
	if u := m[1].Usage; u.InputTokens != 1200 || u.CacheReadTokens != 300 || u.OutputTokens != 40 || u.APICalls != 1 {
		t.Errorf("first step's usage %+v", u)
	}
	if u := m[2].Usage; m[2].Parts[0].Text != "notes.txt has two lines." || u.InputTokens != 100 || u.CacheReadTokens != 1500 || u.OutputTokens != 9 {
		t.Errorf("second step %+v %+v", m[2].Parts, u)
	}
	if read := m[4].Parts[0]; read.Name != "Read" || read.Status != loom.ToolError || !strings.Contains(read.Error, "file not found") ||
		string(read.Input) != `{"path":"missing.txt"}` {
		t.Errorf("failed read %+v", read)
	}
	if m[6].Parts[0].Text != "Thanks." || !m[0].CreatedAt.Before(m[2].CreatedAt) {
		t.Errorf("steer %+v, times %v %v", m[6].Parts, m[0].CreatedAt, m[2].CreatedAt)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, sessions, 1, 7)
}

// $LOOM_KIMI_WORK_DIR names the sessions' directory; else the app's
// data directories.
func TestRoots(t *testing.T) {
	got := Format{}.Roots(importertest.Getenv("LOOM_KIMI_WORK_DIR", "/x/s"), "/home/u")
	if len(got) != 1 || got[0] != "/x/s" {
		t.Errorf("roots %v", got)
	}
	got = Format{}.Roots(nil, "/home/u")
	if len(got) != 4 || got[0] != filepath.Join("/home/u", ".config", "kimi-desktop", "daimon-share", "daimon", "runtime", "kimi-code", "home", "sessions") {
		t.Errorf("roots %v", got)
	}
}
