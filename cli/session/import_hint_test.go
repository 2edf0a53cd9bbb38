package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// A directory that holds a tool's session file under another name
// imports nothing, and the report says how the tool names its files and
// that a file named on the command line is read whatever its name.
func TestImportDirectoryWithoutSessionFiles(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(clitest.Samples, "codex", "vibecodingtracker-codex.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "a-codex-session.jsonl")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	out := fx.MustExec(t, "session", "import", "--from", "codex", dir)
	if !strings.Contains(out, "no session files there: codex names them rollout-*.jsonl") {
		t.Fatalf("the report of a directory without rollout files:\n%s", out)
	}
	if out := fx.MustExec(t, "session", "import", "--from", "codex", file); !strings.Contains(out, "1 new") || strings.Contains(out, "no session files there") {
		t.Fatalf("the same file named:\n%s", out)
	}
}
