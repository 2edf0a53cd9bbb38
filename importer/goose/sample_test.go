package goose

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteSample writes testdata/$dbName, the database the tests build,
// when LOOM_WRITE_SAMPLE_DB=1: a database of the agent's kept as a
// file, which importer/agents' property test damages row by row.
func TestWriteSample(t *testing.T) {
	if os.Getenv("LOOM_WRITE_SAMPLE_DB") == "" {
		t.Skip("writes testdata/" + dbName + " with LOOM_WRITE_SAMPLE_DB=1")
	}
	path := buildDB(t, t.TempDir(), 13, -1)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", dbName), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
