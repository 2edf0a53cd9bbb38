package warp

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// Warp's prompts, one session per conversation; replies are not on disk.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	db := importertest.SQLiteWriter(t, filepath.Join(dir, dbName))
	importertest.Exec(t, db, `CREATE TABLE ai_queries (id INTEGER PRIMARY KEY, exchange_id TEXT, conversation_id TEXT, start_ts TEXT, input TEXT, working_directory TEXT, output_status TEXT, model_id TEXT)`)
	importertest.Exec(t, db, `INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input, working_directory, model_id) VALUES
		('e1', 'w-1', '2026-03-03 10:00:00.000000', '[{"Query":{"text":"why is the build slow?"}}]', '/home/u/app', 'claude-4'),
		('e2', 'w-1', '2026-03-03 10:02:00.000000', '[{"Query":{"text":"and the tests?"}}]', '/home/u/app', 'claude-4'),
		('e3', 'w-2', '2026-03-04 11:00:00', 'not json', '/tmp', '')`)
	db.Close()
	res, s := importertest.ReadValidFor(t, Format{}, dir, "w-1")
	if importertest.Roles(s) != "user user" || s.Cwd != "/home/u/app" || len(res.Sessions) != 1 {
		t.Fatalf("%s %q %d", importertest.Roles(s), s.Cwd, len(res.Sessions))
	}
	importertest.ImportsOnce(t, Format{}, dir, 1, 2)
	importertest.RefusesOtherDB(t, Format{}, dbName)
}
