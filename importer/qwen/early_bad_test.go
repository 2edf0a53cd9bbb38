package qwen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// Qwen Code 0.1's recording follows the rule for bad input as the
// others do: a file that is not one is one line naming it, the import
// counting it failed (an empty one is passed over with a line), and the
// line speaks of Qwen Code, not of the reader it borrows.
func TestEarlyRecordingBadInput(t *testing.T) {
	for _, c := range []struct {
		name   string
		data   []byte
		failed int
	}{
		{"garbage", []byte("\x00\x01garbage \xff\xfe not a session\n{[ nor this"), 1},
		{"0 bytes", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := importertest.CopyDir(t, "testdata/tmp")
			chats := filepath.Join(root, "7605ea6788c640fee9e712f2bc808a7444de8007a829a26cf841c9363bef066c", "chats")
			bad := filepath.Join(chats, "session-2025-09-13T10-00-0a0b0c0d.json")
			importertest.WriteFile(t, bad, c.data, 0o644)
			// Written a minute ago: not caught while Qwen Code writes it.
			old := time.Now().Add(-time.Minute)
			os.Chtimes(bad, old, old)
			tr := importertest.Import(t, importertest.Store(t), Format{}, root)
			var lines []string
			for _, p := range tr.Problems {
				if p.File == bad {
					lines = append(lines, p.String())
				}
			}
			if len(lines) != 1 || tr.SessionsNew != 2 || strings.Contains(lines[0], "gemini") || tr.FilesFailed != c.failed {
				t.Errorf("failed %d, sessions %d, lines %q", tr.FilesFailed, tr.SessionsNew, lines)
			}
		})
	}
}
