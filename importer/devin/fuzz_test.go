package devin

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary text as a node's chat_message: no panic,
// bounded time, a valid result.
func FuzzRead(f *testing.F) {
	f.Add(`{"role":"assistant","content":[{"type":"thinking","thinking":"x"}],"tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]}`)
	f.Add(`{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"out"}]}`)
	f.Fuzz(func(t *testing.T, msg string) {
		// Not t.TempDir: a seed's name holds a '#', which ends the path
		// of the database's file: URI.
		dir, err := os.MkdirTemp("", "devin-fuzz")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		db := importertest.SQLiteWriter(t, filepath.Join(dir, dbName))
		importertest.Exec(t, db, schema)
		importertest.Exec(t, db, `INSERT INTO sessions (id, main_chain_id) VALUES ('s', 2)`)
		importertest.Exec(t, db, `INSERT INTO message_nodes (node_id, parent_node_id, session_id, chat_message, created_at) VALUES
			(1, NULL, 's', '{"role":"user","content":"q"}', 1), (2, 1, 's', ?, 2)`, msg)
		db.Close()
		res := importertest.ReadAll(t, Format{}, dir)
		importertest.CheckValidOf(t, Tool, res)
	})
}
