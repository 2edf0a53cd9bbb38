package cli

import (
	"context"

	"github.com/loomhq/loom"
)

// emptyStore stands for a store that does not exist yet at the default
// location: it holds no sessions, and a command that only reads (or
// looks for a session to change) finds nothing, without a file being
// created. Commands that write a first session open the store for
// creation instead, so nothing ever writes here.
type emptyStore struct{ url string }

var _ loom.Store = (*emptyStore)(nil)

func (e *emptyStore) noStore() error {
	return loom.Errorf(loom.EINVALID, "no store at %s yet", e.url)
}

func (e *emptyStore) Append(context.Context, *loom.Session, ...*loom.Message) error {
	return e.noStore()
}

func (e *emptyStore) UpdatePart(context.Context, string, int64, loom.Part) error {
	return e.noStore()
}

func (e *emptyStore) UpdateUsage(context.Context, string, int64, loom.Usage) error {
	return e.noStore()
}

func (e *emptyStore) RepairInterrupted(context.Context, string) (int, error) { return 0, nil }

func (e *emptyStore) Messages(context.Context, string, loom.MessageQuery) ([]*loom.Message, error) {
	return nil, nil
}

func (e *emptyStore) Context(context.Context, string) ([]*loom.Message, error) { return nil, nil }

func (e *emptyStore) Session(_ context.Context, id string) (*loom.Session, error) {
	return nil, loom.NotFound(id)
}

func (e *emptyStore) Resolve(_ context.Context, ref string, scope loom.ResolveScope) (*loom.Session, error) {
	return loom.ResolveRef(ref, scope, func(loom.RefLookup, string) ([]*loom.Session, error) { return nil, nil })
}

func (e *emptyStore) Sessions(context.Context, loom.SessionFilter) ([]*loom.Session, error) {
	return nil, nil
}

func (e *emptyStore) Summaries(context.Context, loom.SessionFilter) ([]*loom.SessionSummary, error) {
	return nil, nil
}

func (e *emptyStore) Family(context.Context, loom.FamilyQuery) ([]*loom.Session, error) {
	return nil, nil
}

func (e *emptyStore) UpdateSession(_ context.Context, id string, _ loom.SessionUpdate) (*loom.Session, error) {
	return nil, loom.NotFound(id)
}

func (e *emptyStore) Fork(_ context.Context, id string, _ loom.ForkOptions) (*loom.Session, error) {
	return nil, loom.NotFound(id)
}

func (e *emptyStore) Rewind(_ context.Context, id string, _ loom.RewindOptions) (*loom.Session, error) {
	return nil, loom.NotFound(id)
}

func (e *emptyStore) Delete(_ context.Context, id string, _ loom.DeleteOptions) ([]*loom.Session, error) {
	return nil, loom.NotFound(id)
}

func (e *emptyStore) Restore(_ context.Context, id string) error { return loom.NotFound(id) }

func (e *emptyStore) Prune(context.Context, loom.PruneOptions) (*loom.PruneResult, error) {
	return &loom.PruneResult{}, nil
}

func (e *emptyStore) Search(context.Context, loom.SearchQuery) ([]loom.SearchHit, error) {
	return nil, nil
}

func (e *emptyStore) Usage(context.Context, loom.UsageFilter) (*loom.UsageReport, error) {
	return &loom.UsageReport{BySession: []loom.UsageRow{}, ByProject: []loom.UsageRow{}, ByModel: []loom.UsageRow{}}, nil
}

func (e *emptyStore) UsageSlices(context.Context, loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	return nil, nil
}

func (e *emptyStore) Lock(context.Context, string) (loom.Lease, error) { return nil, e.noStore() }

func (e *emptyStore) Import(context.Context, []*loom.SessionData) error { return e.noStore() }

func (e *emptyStore) Close() error { return nil }

func (e *emptyStore) ImportedFiles(context.Context, string, string) ([]loom.ImportedFile, error) {
	return nil, nil
}

func (e *emptyStore) RecordImportedFiles(context.Context, []loom.ImportedFile) error {
	return e.noStore()
}

func (e *emptyStore) ReadSessions(context.Context, []string, loom.MessageQuery) ([]*loom.SessionData, error) {
	return nil, nil
}
