package reasonix

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session's log: no panic, bounded
// time, a valid result.
func FuzzRead(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join(projects, "-tmp-agents71b-rh-work", "sessions-v4", "7bcce35e75a60c987f8f5364e932a339", "events.frames"))
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte("RX4F\x00\x00\x00\x05\x00\x00\x00\x05{\"a\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"p/sessions-v4/s/events.frames"}, data)
	})
}
