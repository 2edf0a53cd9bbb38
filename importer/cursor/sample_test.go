package cursor

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteSample writes testdb/state.vscdb, the database the tests build,
// when LOOM_WRITE_SAMPLE_DB=1: a database of the agent's kept as a
// file, which importer/agents' property test damages row by row (kept
// apart from testdata/, which this package's tests read whole).
func TestWriteSample(t *testing.T) {
	if os.Getenv("LOOM_WRITE_SAMPLE_DB") == "" {
		t.Skip("writes testdb/state.vscdb with LOOM_WRITE_SAMPLE_DB=1")
	}
	dir := t.TempDir()
	_, db := buildEditor(t, dir, len(editorBubbles))
	db.Close()
	data, err := os.ReadFile(filepath.Join(dir, "state.vscdb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("testdb", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdb", "state.vscdb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
