package crush

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// TestWriteSample writes testdata/.crush/crush.db, the database the
// tests build (the latest migrations, the whole conversation), when
// LOOM_WRITE_SAMPLE_DB=1: a database of Crush's kept as a file, which
// importer/agents' property test damages row by row.
func TestWriteSample(t *testing.T) {
	importertest.WriteSample(t, filepath.Join("testdata", dataDir, dbName), func(t *testing.T) string {
		return buildDB(t, t.TempDir(), len(migrations), len(conversation))
	})
}
