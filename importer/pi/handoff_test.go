package pi

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// TestHandoffReadsBack: a handed-off session is a file where pi looks
// for the sessions of its directory, which loom reads back as a fork of
// the session it continues: the prompt, the reply with its reasoning,
// the shell command and the file read as pi's bash and read calls with
// their results, and any other call told as text.
func TestHandoffReadsBack(t *testing.T) {
	home, out := importertest.HandsBack(t, Format{}, "bash", "read")
	if want := filepath.Join(home, ".pi", "agent", "sessions", "--src-my app--"); filepath.Dir(out.Path) != want || !strings.HasSuffix(out.Path, "_"+out.SessionID+".jsonl") {
		t.Errorf("handed %s; want a file in %s", out.Path, want)
	}
}
