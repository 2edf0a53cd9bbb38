// Package opencodego reads the sessions of OpenCode, the Go program
// (opencode-ai/opencode, the opencode command up to v0.0.55, archived
// since and continued as Charm's Crush) for loom's importer. It is not
// sst's opencode (the opencode reader), which keeps its own database
// elsewhere.
//
// OpenCode keeps each project's sessions in the SQLite database
// opencode.db in the project's data directory (.opencode in the
// directory it ran in, unless its configuration's data.directory says
// otherwise); it lists no projects anywhere, so loom reads the projects,
// data directories or databases it is given. The database is Crush's
// first schema: Crush's migrations begin with OpenCode's two
// (20250424200609_initial.sql, 20250515105448_add_summary_message_id.sql),
// so the crush reader reads it (crush.ReadDatabase): sessions with their
// title and token totals, messages with their parts (text, reasoning,
// tool calls and results, finish), sub-agents, summaries.
//
// The format is the one OpenCode v0.0.55 wrote when run offline against
// a fake model (testdata/real).
package opencodego

import (
	"context"
	"io/fs"
	"path/filepath"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/crush"
)

// Format reads OpenCode's databases. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is OpenCode's (the Go program's) name in loom.
const Tool = "opencode-go"

// dbName is OpenCode's database, in a project's data directory
// dataDir.
const (
	dbName  = "opencode.db"
	dataDir = ".opencode"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": each reply names its provider.
func (Format) Provider() string { return "" }

// Roots is none: OpenCode keeps its database in each project it ran in
// and lists them nowhere, so loom reads the projects it is given.
func (Format) Roots(func(string) string, string) []string { return nil }

// Bundles finds OpenCode's databases under root: root itself when it is
// a file, else every opencode.db in a .opencode directory below it
// (dependency and version-control directories passed over), or in root
// when root is a data directory.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	isData := filepath.Base(filepath.Clean(root)) == dataDir
	bs, err := importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		return d.Name() == dbName && (filepath.Base(filepath.Dir(path)) == dataDir || isData && filepath.Dir(path) == filepath.Clean(root))
	})
	for i, b := range bs {
		bs[i] = importer.SQLiteBundle(b.Name())
	}
	return bs, err
}

// Read reads every session of one database.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	return crush.ReadDatabase(ctx, b, dataDir, "OpenCode")
}

// CountSessions counts the sessions of one database.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	return crush.Format{}.CountSessions(ctx, b)
}
