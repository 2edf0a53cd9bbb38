package goose

import (
	"context"

	"github.com/loomhq/loom/importer"
)

var _ importer.Counter = Format{}

// CountSessions counts the sessions of a bundle: the rows of the
// database's sessions table; a JSONL file is one.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(*) FROM sessions", "sessions")
}
