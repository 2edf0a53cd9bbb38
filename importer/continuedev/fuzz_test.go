package continuedev

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a Continue session file. Reading
// must not panic, and whatever it returns must be valid loom messages.
// The file is read whole (at most importer.MaxDocument), so its reading
// from disk is not fuzzed.
func FuzzRead(f *testing.F) {
	importertest.SeedFiles(f, filepath.Join(fixture, guiID+".json"), filepath.Join(fixture, cliID+".json"))
	f.Add([]byte(`{"history":[{"message":{"role":"tool","toolCallId":"x","content":[{"type":"text","text":1}]}},{"message":{"role":"assistant","toolCalls":[{}]},"toolCallStates":[{"status":"done","parsedArgs":[1]}]}],"usage":{"promptTokens":-1e308}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := parse("s.json", data, time.Time{}, time.Unix(1762000000, 0))
		if err != nil {
			t.Fatal(err)
		}
		importertest.Check(t, res)
	})
}
