package zed

import (
	"context"

	"github.com/loomhq/loom/importer"
)

var _ importer.Counter = Format{}

// CountSessions counts the sessions of a bundle: the threads of the
// threads database; a saved text thread is one.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(*) FROM threads", "threads")
}
