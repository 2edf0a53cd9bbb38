package importertest

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteSample copies the database build makes (it returns its path) to
// out, relative to the reader's package, when LOOM_WRITE_SAMPLE_DB=1,
// and skips t otherwise: a database the reader's tests build, kept as a
// file, which importer/agents' property test damages row by row.
func WriteSample(t *testing.T, out string, build func(t *testing.T) string) {
	t.Helper()
	if os.Getenv("LOOM_WRITE_SAMPLE_DB") == "" {
		t.Skip("writes " + out + " with LOOM_WRITE_SAMPLE_DB=1")
	}
	data, err := os.ReadFile(build(t))
	if err != nil {
		t.Fatal(err)
	}
	MkdirAll(t, filepath.Dir(out))
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
