package qwen

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// TestHandoffReadsBack: a handed-off session is a chat where Qwen Code
// keeps the sessions of its directory, which loom reads back as a fork
// of the session it continues: the prompt, the reply with its
// reasoning, the shell command and the file read as Qwen Code's calls
// with their results, and any other call told as text.
func TestHandoffReadsBack(t *testing.T) {
	home, out := importertest.HandsBack(t, Format{}, "run_shell_command", "read_file")
	if want := filepath.Join(home, ".qwen", "projects", "-src-my-app", "chats", out.SessionID+".jsonl"); out.Path != want {
		t.Errorf("handed %s; want %s", out.Path, want)
	}
}
