package command

import (
	"context"

	"github.com/loomhq/loom"
)

// EmptyStore stands for a store that does not exist yet at the default
// location: it holds no sessions, and a command that only reads (or
// looks for a session to change) finds nothing, without a file being
// created. Commands that write a first session open the store for
// creation instead, so nothing ever writes here.
type EmptyStore struct{ url string }

var _ loom.Engine = (*EmptyStore)(nil)

// Optional implements loom.Engine: a store that does not exist provides
// none.
func (e *EmptyStore) Optional() loom.Optional { return loom.Optional{} }

// Reads implements loom.Reader: none.
func (e *EmptyStore) Reads() loom.Reads { return loom.Reads{} }

func (e *EmptyStore) noStore() error {
	return loom.Errorf(loom.EINVALID, "no store at %s yet", e.url)
}

func (e *EmptyStore) Append(context.Context, *loom.Session, ...*loom.Message) error {
	return e.noStore()
}

func (e *EmptyStore) UpdatePart(context.Context, string, int64, loom.Part) error {
	return e.noStore()
}

func (e *EmptyStore) UpdateUsage(context.Context, string, int64, loom.Usage) error {
	return e.noStore()
}

func (e *EmptyStore) RepairInterrupted(context.Context, string) (int, error) { return 0, nil }

func (e *EmptyStore) Messages(context.Context, string, loom.MessageQuery) ([]*loom.Message, error) {
	return nil, nil
}

func (e *EmptyStore) Context(context.Context, string) ([]*loom.Message, error) { return nil, nil }

func (e *EmptyStore) Session(_ context.Context, id string) (*loom.Session, error) {
	return nil, loom.NotFound(id)
}

func (e *EmptyStore) Resolve(_ context.Context, ref string, scope loom.ResolveScope) (*loom.Session, error) {
	return loom.ResolveRef(ref, scope, func(loom.RefLookup, string) ([]*loom.Session, error) { return nil, nil })
}

func (e *EmptyStore) Sessions(context.Context, loom.SessionFilter) ([]*loom.Session, error) {
	return nil, nil
}

func (e *EmptyStore) Summaries(context.Context, loom.SessionFilter) ([]*loom.SessionSummary, error) {
	return nil, nil
}

func (e *EmptyStore) Family(context.Context, loom.FamilyQuery) ([]*loom.Session, error) {
	return nil, nil
}

func (e *EmptyStore) UpdateSession(_ context.Context, id string, _ loom.SessionUpdate) (*loom.Session, error) {
	return nil, loom.NotFound(id)
}

func (e *EmptyStore) Fork(_ context.Context, id string, _ loom.ForkOptions) (*loom.Session, error) {
	return nil, loom.NotFound(id)
}

func (e *EmptyStore) Rewind(_ context.Context, id string, _ loom.RewindOptions) (*loom.Session, error) {
	return nil, loom.NotFound(id)
}

func (e *EmptyStore) Delete(_ context.Context, id string, _ loom.DeleteOptions) ([]*loom.Session, error) {
	return nil, loom.NotFound(id)
}

func (e *EmptyStore) Restore(_ context.Context, id string) error { return loom.NotFound(id) }

func (e *EmptyStore) Prune(context.Context, loom.PruneOptions) (*loom.PruneResult, error) {
	return &loom.PruneResult{}, nil
}

func (e *EmptyStore) Search(context.Context, loom.SearchQuery) ([]loom.SearchHit, error) {
	return nil, nil
}

func (e *EmptyStore) Usage(context.Context, loom.UsageFilter) (*loom.UsageReport, error) {
	return &loom.UsageReport{BySession: []loom.UsageRow{}, ByProject: []loom.UsageRow{}, ByModel: []loom.UsageRow{}}, nil
}

func (e *EmptyStore) UsageSlices(context.Context, loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	return nil, nil
}

func (e *EmptyStore) Lock(context.Context, string) (loom.Lease, error) { return nil, e.noStore() }

func (e *EmptyStore) Import(context.Context, []*loom.SessionData) error { return e.noStore() }

func (e *EmptyStore) Close() error { return nil }

func (e *EmptyStore) ImportedFiles(context.Context, string, string) ([]loom.ImportedFile, error) {
	return nil, nil
}

func (e *EmptyStore) RecordImportedFiles(context.Context, []loom.ImportedFile) error {
	return e.noStore()
}

func (e *EmptyStore) ReadSessions(context.Context, []string, loom.MessageQuery) ([]*loom.SessionData, error) {
	return nil, nil
}

// The required services of an engine (loom.Engine) read as empty, and
// write nothing: a write is the error of a store not created yet, as
// the store's own writes are. A move, like a removal, finds nothing to
// move (loom session move says no sessions belong to the project).

func (e *EmptyStore) CountingSessions(context.Context, string, []string) (map[string]string, error) {
	return nil, nil
}

func (e *EmptyStore) LockSource(context.Context, string, string) (loom.Lease, error) {
	return nil, e.noStore()
}

func (e *EmptyStore) ApplyImport(context.Context, *loom.ImportWrite) error { return e.noStore() }

func (e *EmptyStore) MoveProject(_ context.Context, m loom.ProjectMove) ([]*loom.Session, error) {
	return nil, m.Validate()
}

func (e *EmptyStore) OriginalFiles(context.Context, string, string) ([]loom.OriginalFile, error) {
	return nil, nil
}

func (e *EmptyStore) KeepOriginal(context.Context, loom.OriginalChunk) error { return e.noStore() }

func (e *EmptyStore) OriginalChunks(context.Context, string, string, func(loom.OriginalChunk) error) error {
	return nil
}

func (e *EmptyStore) RewriteOriginal(context.Context, string, string, int64, []byte) error {
	return e.noStore()
}

func (e *EmptyStore) DeleteOriginals(context.Context, string, []string) (int, error) { return 0, nil }

func (e *EmptyStore) PutSyncRecords(context.Context, string, []loom.SyncRecord) (int, error) {
	return 0, e.noStore()
}

func (e *EmptyStore) SyncRecords(context.Context, string, string, int64, int) ([]loom.SyncRecord, error) {
	return nil, nil
}

func (e *EmptyStore) SyncHosts(context.Context, string) ([]loom.SyncHost, error) { return nil, nil }

func (e *EmptyStore) UnindexedEdits(context.Context, int) ([]loom.EditSource, error) { return nil, nil }

func (e *EmptyStore) PutEdits(context.Context, []loom.EditSource, []loom.IndexedEdit) error {
	return e.noStore()
}

func (e *EmptyStore) Edits(context.Context, loom.EditQuery) ([]loom.FileEdit, error) { return nil, nil }

func (e *EmptyStore) ProjectRoots(context.Context, string, string) ([]string, error) { return nil, nil }

func (e *EmptyStore) EditVersion(context.Context) (string, error) { return "", nil }
