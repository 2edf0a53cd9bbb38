package cursor

import (
	"context"

	"github.com/loomhq/loom/importer"
)

var _ importer.Counter = Format{}

// CountSessions counts the sessions of a bundle: the chats (composers)
// the editor's database keeps, empty ones included; a transcript is one.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(*) FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'", "cursorDiskKV")
}
