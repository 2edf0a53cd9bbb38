package hermes

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

var (
	sessions = filepath.Join("testdata", "sessions")
	file     = filepath.Join(sessions, "20260403_153620_5a3e2ff1.jsonl")
)

// A Hermes transcript: its metadata names the model; reasoning, a call
// completed by its tool message, each message at its own time.
func TestRead(t *testing.T) {
	_, s := importertest.ReadValidFor(t, Format{}, sessions, "20260403_153620_5a3e2ff1")
	if importertest.Roles(s) != "user assistant assistant" || s.Model != "hermes-4-70b" {
		t.Fatalf("session %s %q", importertest.Roles(s), s.Model)
	}
	if p := s.Messages[1].Parts; p[0].Type != loom.PartReasoning || p[1].Status != loom.ToolCompleted || string(p[1].Output) != `"/dev/sda1 40G 12G"` {
		t.Errorf("call %+v", p)
	}
	if s.Messages[2].CreatedAt.Sub(s.Messages[0].CreatedAt).Seconds() != 5 {
		t.Errorf("times %v %v", s.Messages[0].CreatedAt, s.Messages[2].CreatedAt)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsAndFollows(t, Format{}, sessions, 1, 3, filepath.Base(file),
		`{"role":"user","content":"Thanks","timestamp":"2026-04-03T15:37:00"}`)
	importertest.Malformed(t, Format{}, file, "s.jsonl")
}
