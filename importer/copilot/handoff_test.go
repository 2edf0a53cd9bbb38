package copilot

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// TestHandoffReadsBack: a handed-off session is an events.jsonl where
// Copilot CLI keeps its sessions, which loom reads back as a fork of the
// session it continues: the prompt, the reply with its reasoning, the
// shell command and the file read as Copilot CLI's bash and view calls
// with their results, and any other call told as text.
func TestHandoffReadsBack(t *testing.T) {
	home, out := importertest.HandsBack(t, Format{}, "bash", "view")
	if want := filepath.Join(home, ".copilot", "session-state", out.SessionID, "events.jsonl"); out.Path != want {
		t.Errorf("handed %s; want %s", out.Path, want)
	}
}
