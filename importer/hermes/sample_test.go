package hermes

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// TestWriteSample writes testdb/state.db, the database the tests build,
// when LOOM_WRITE_SAMPLE_DB=1: a database of the agent's kept as a
// file, which importer/agents' property test damages row by row (kept
// apart from testdata/, which this package's tests read whole).
func TestWriteSample(t *testing.T) {
	importertest.WriteSample(t, filepath.Join("testdb", "state.db"), func(t *testing.T) string {
		dir := t.TempDir()
		writeState(t, dir)
		return filepath.Join(dir, "state.db")
	})
}
