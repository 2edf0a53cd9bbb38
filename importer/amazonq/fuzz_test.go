package amazonq

import (
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a conversation's state: no panic,
// a valid result.
func FuzzRead(f *testing.F) {
	f.Add([]byte(conversationJSON))
	f.Add([]byte(`{"history":[[{"content":{"Prompt":{"prompt":"x"}}},{"Response":{"content":"y"}}]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res := &importer.Result{}
		if s := conversation(res, "db", "/cwd", data, time.Unix(1, 0)); s != nil {
			res.Sessions = append(res.Sessions, s)
		}
		importertest.CheckValidOf(t, Tool, res)
	})
}
