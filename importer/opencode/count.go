package opencode

import (
	"context"

	"github.com/loomhq/loom/importer"
)

var _ importer.Counter = Format{}

// CountSessions counts the sessions of a bundle: the rows of the
// database's session table, its sub-agents' included; a session of the
// storage tree is one.
func (f Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	return importer.CountSQLite(ctx, f.Tool(), b, "SELECT count(*) FROM session", "session", "message", "part")
}
