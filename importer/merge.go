package importer

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
)

// MergeIndexAfter is how many messages an import adds before it merges
// the search index (see loom.IndexMerger): the merge costs some seconds at a
// million messages, which only a large import is worth.
const MergeIndexAfter = 10000

// MergeAfterImport merges st's search index when its engine merges one
// (loom.Optional.IndexMerger) and an import added at least MergeIndexAfter messages. A merge that fails
// leaves the index as the import left it, which works as well, only
// slower to write to: the caller logs the error, and the import stands.
func MergeAfterImport(ctx context.Context, st loom.Engine, added int) error {
	m := st.Optional().IndexMerger
	if m == nil || added < MergeIndexAfter {
		return nil
	}
	if err := m.MergeIndex(ctx); err != nil {
		return fmt.Errorf("the search index was left unmerged: %w", err)
	}
	return nil
}
