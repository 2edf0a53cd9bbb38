package shelley

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary text as a message's llm_data and usage_data:
// no panic, bounded time, a valid result.
func FuzzRead(f *testing.F) {
	f.Add(`{"Role":1,"Content":[{"Type":5,"ID":"t","ToolName":"bash","ToolInput":{}}]}`, `{"input_tokens":3}`)
	f.Add(`{"Role":0,"Content":[{"Type":6,"ToolUseID":"t","ToolResult":[{"Type":2,"Text":"x"}]}]}`, ``)
	f.Fuzz(func(t *testing.T, llm, use string) {
		// Not t.TempDir: a seed's test name holds a '#', which ends the
		// path of the database's file: URI.
		dir, err := os.MkdirTemp("", "shelley-fuzz")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		db := importertest.SQLiteWriter(t, filepath.Join(dir, dbName))
		importertest.Exec(t, db, schema)
		importertest.Exec(t, db, `INSERT INTO conversations (conversation_id) VALUES ('c')`)
		importertest.Exec(t, db, `INSERT INTO messages (message_id, conversation_id, sequence_id, type, llm_data, usage_data) VALUES ('m', 'c', 1, 'agent', ?, ?)`, llm, use)
		db.Close()
		res := importertest.ReadAll(t, Format{}, dir)
		importertest.CheckValidOf(t, Tool, res)
	})
}
