package clinetasks

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a task's conversation and UI
// messages. Reading must not panic, and whatever it returns must be
// valid loom messages. The files are read whole (at most
// importer.MaxDocument each), so their reading from disk is not fuzzed.
func FuzzRead(f *testing.F) {
	for _, dir := range []string{"cline/tasks/1761900000000", "cline/tasks/1700000000000", "roo/tasks/" + rooTask} {
		api, _ := os.ReadFile(filepath.Join("testdata", dir, apiFile))
		ui, _ := os.ReadFile(filepath.Join("testdata", dir, uiFile))
		f.Add(api, ui)
	}
	f.Add([]byte(`[{"role":"assistant","content":[{"type":"tool_use","input":[1]},{"type":"tool_use","id":"x","name":"new_task"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"text","text":7}]}]}]`),
		[]byte(`[{"say":"api_req_started","text":"{\"tokensIn\":-1e308,\"tokensOut\":1e308,\"cost\":\"x\"}"}]`))
	f.Fuzz(func(t *testing.T, api, ui []byte) {
		tk := task{id: "t", files: []taskFile{{name: apiFile, path: apiFile, data: api}, {name: uiFile, path: uiFile, data: ui},
			{name: historyFile, path: historyFile, data: []byte(`{"childIds":["c1","c1"],"parentTaskId":"p"}`)}}, modified: time.Unix(1762000000, 0)}
		res := tk.parse()
		importertest.CheckValidOf(t, Cline.Tool(), res)
	})
}
