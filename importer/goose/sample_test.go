package goose

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// TestWriteSample writes testdata/$dbName, the database the tests build,
// when LOOM_WRITE_SAMPLE_DB=1: a database of the agent's kept as a
// file, which importer/agents' property test damages row by row.
func TestWriteSample(t *testing.T) {
	importertest.WriteSample(t, filepath.Join("testdata", dbName), func(t *testing.T) string {
		return buildDB(t, t.TempDir(), 13, -1)
	})
}
