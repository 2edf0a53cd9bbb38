package crush

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// TestWriteSample writes testdata/.crush/crush.db, the database the
// tests build (the latest migrations, the whole conversation), when
// LOOM_WRITE_SAMPLE_DB=1: a database of Crush's kept as a file, which
// importer/agents' property test damages row by row.
func TestWriteSample(t *testing.T) {
	if os.Getenv("LOOM_WRITE_SAMPLE_DB") == "" {
		t.Skip("writes testdata/.crush/crush.db with LOOM_WRITE_SAMPLE_DB=1")
	}
	path := buildDB(t, t.TempDir(), len(migrations), len(conversation))
	out := filepath.Join("testdata", dataDir, dbName)
	importertest.MkdirAll(t, filepath.Dir(out))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
