package grok

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session's chat history, summary
// and update stream: no panic, bounded time, a valid result.
func FuzzRead(f *testing.F) {
	dir := filepath.Dir(history)
	h, _ := os.ReadFile(history)
	s, _ := os.ReadFile(dir + "/" + summaryFile)
	u, _ := os.ReadFile(dir + "/" + updatesFile)
	f.Add(h, s, u)
	f.Fuzz(func(t *testing.T, h, s, u []byte) {
		importertest.FuzzFiles(t, Format{}, []string{"g/s/" + historyFile, "g/s/" + summaryFile, "g/s/" + updatesFile}, h, s, u)
	})
}
