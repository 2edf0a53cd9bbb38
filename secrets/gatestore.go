package secrets

import (
	"context"

	"github.com/loomhq/loom"
)

// The methods of loom.Store that the gate hands to the store below as
// they are: the writes, and the reads that return no stored text (usage
// in figures, records of imported files). A read that returns text is
// redacted in gate.go. The gate embeds no store, so a method added to
// loom.Store is added here or there, by decision.

var _ loom.Engine = (*Gate)(nil)

// Append implements loom.Store: a write, unchanged (the session it
// refreshes is the caller's own).
func (g *Gate) Append(ctx context.Context, s *loom.Session, msgs ...*loom.Message) error {
	return g.st.Append(ctx, s, msgs...)
}

// UpdatePart implements loom.Store: a write, unchanged.
func (g *Gate) UpdatePart(ctx context.Context, sessionID string, seq int64, part loom.Part) error {
	return g.st.UpdatePart(ctx, sessionID, seq, part)
}

// UpdateUsage implements loom.Store: a write, unchanged.
func (g *Gate) UpdateUsage(ctx context.Context, sessionID string, seq int64, u loom.Usage) error {
	return g.st.UpdateUsage(ctx, sessionID, seq, u)
}

// RepairInterrupted implements loom.Store: a write, which returns a
// count.
func (g *Gate) RepairInterrupted(ctx context.Context, sessionID string) (int, error) {
	return g.st.RepairInterrupted(ctx, sessionID)
}

// Restore implements loom.Store: a write, unchanged.
func (g *Gate) Restore(ctx context.Context, id string) error {
	return g.st.Restore(ctx, id)
}

// Prune implements loom.Store: a write, whose sessions removed and
// skipped are read through the gate, as Delete's are.
func (g *Gate) Prune(ctx context.Context, opts loom.PruneOptions) (*loom.PruneResult, error) {
	res, err := g.st.Prune(ctx, opts)
	if res != nil {
		res.Removed, res.Skipped = g.sessions(res.Removed), g.sessions(res.Skipped)
	}
	return res, g.err(err)
}

// UsageSlices implements loom.Store: figures by quarter hour, agent,
// project and model, no stored text.
func (g *Gate) UsageSlices(ctx context.Context, f loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	return g.st.UsageSlices(ctx, f)
}

// Lock implements loom.Store: a write, unchanged.
func (g *Gate) Lock(ctx context.Context, sessionID string) (loom.Lease, error) {
	return g.st.Lock(ctx, sessionID)
}

// Import implements loom.Store: a write, unchanged.
func (g *Gate) Import(ctx context.Context, sessions []*loom.SessionData) error {
	return g.st.Import(ctx, sessions)
}

// ImportedFiles implements loom.Store: records of the files imported
// (paths, sizes, digests), no stored text.
func (g *Gate) ImportedFiles(ctx context.Context, userID, tool string) ([]loom.ImportedFile, error) {
	return g.st.ImportedFiles(ctx, userID, tool)
}

// RecordImportedFiles implements loom.Store: a write, unchanged.
func (g *Gate) RecordImportedFiles(ctx context.Context, files []loom.ImportedFile) error {
	return g.st.RecordImportedFiles(ctx, files)
}

// Close implements loom.Store: it closes the store below.
func (g *Gate) Close() error { return g.st.Close() }
