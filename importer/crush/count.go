package crush

import (
	"context"

	"github.com/loomhq/loom/importer"
)

var _ importer.Counter = Format{}

// CountSessions counts the sessions of Crush's database: the rows of its
// sessions table, sub-agents' included.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(*) FROM sessions", "sessions", "messages")
}
