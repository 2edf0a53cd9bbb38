package fake

import (
	"context"

	"github.com/loomhq/loom"
)

// CallCounter is a fake loom.CallCounter.
type CallCounter struct {
	CountingSessionsFn func(ctx context.Context, userID string, calls []string) (map[string]string, error)
}

var _ loom.CallCounter = (*CallCounter)(nil)

// CountingSessions calls CountingSessionsFn.
func (fk *CallCounter) CountingSessions(ctx context.Context, userID string, calls []string) (map[string]string, error) {
	return call(fk.CountingSessionsFn, "CallCounter.CountingSessions")(ctx, userID, calls)
}

// SourceLocker is a fake loom.SourceLocker.
type SourceLocker struct {
	LockSourceFn func(ctx context.Context, userID, path string) (loom.Lease, error)
}

var _ loom.SourceLocker = (*SourceLocker)(nil)

// LockSource calls LockSourceFn.
func (fk *SourceLocker) LockSource(ctx context.Context, userID, path string) (loom.Lease, error) {
	return call(fk.LockSourceFn, "SourceLocker.LockSource")(ctx, userID, path)
}

// ImportApplier is a fake loom.ImportApplier.
type ImportApplier struct {
	ApplyImportFn func(ctx context.Context, w *loom.ImportWrite) error
}

var _ loom.ImportApplier = (*ImportApplier)(nil)

// ApplyImport calls ApplyImportFn.
func (fk *ImportApplier) ApplyImport(ctx context.Context, w *loom.ImportWrite) error {
	return call(fk.ApplyImportFn, "ImportApplier.ApplyImport")(ctx, w)
}

// ProjectMover is a fake loom.ProjectMover.
type ProjectMover struct {
	MoveProjectFn func(ctx context.Context, m loom.ProjectMove) ([]*loom.Session, error)
}

var _ loom.ProjectMover = (*ProjectMover)(nil)

// MoveProject calls MoveProjectFn.
func (fk *ProjectMover) MoveProject(ctx context.Context, m loom.ProjectMove) ([]*loom.Session, error) {
	return call(fk.MoveProjectFn, "ProjectMover.MoveProject")(ctx, m)
}

// OriginalsKeeper is a fake loom.OriginalsKeeper.
type OriginalsKeeper struct {
	OriginalFilesFn   func(ctx context.Context, userID, tool string) ([]loom.OriginalFile, error)
	KeepOriginalFn    func(ctx context.Context, c loom.OriginalChunk) error
	OriginalChunksFn  func(ctx context.Context, userID, path string, fn func(loom.OriginalChunk) error) error
	RewriteOriginalFn func(ctx context.Context, userID, path string, offset int64, data []byte) error
	DeleteOriginalsFn func(ctx context.Context, userID string, sessionIDs []string) (int, error)
}

var _ loom.OriginalsKeeper = (*OriginalsKeeper)(nil)

// OriginalFiles calls OriginalFilesFn.
func (fk *OriginalsKeeper) OriginalFiles(ctx context.Context, userID, tool string) ([]loom.OriginalFile, error) {
	return call(fk.OriginalFilesFn, "OriginalsKeeper.OriginalFiles")(ctx, userID, tool)
}

// KeepOriginal calls KeepOriginalFn.
func (fk *OriginalsKeeper) KeepOriginal(ctx context.Context, c loom.OriginalChunk) error {
	return call(fk.KeepOriginalFn, "OriginalsKeeper.KeepOriginal")(ctx, c)
}

// OriginalChunks calls OriginalChunksFn.
func (fk *OriginalsKeeper) OriginalChunks(ctx context.Context, userID, path string, fn func(loom.OriginalChunk) error) error {
	return call(fk.OriginalChunksFn, "OriginalsKeeper.OriginalChunks")(ctx, userID, path, fn)
}

// RewriteOriginal calls RewriteOriginalFn.
func (fk *OriginalsKeeper) RewriteOriginal(ctx context.Context, userID, path string, offset int64, data []byte) error {
	return call(fk.RewriteOriginalFn, "OriginalsKeeper.RewriteOriginal")(ctx, userID, path, offset, data)
}

// DeleteOriginals calls DeleteOriginalsFn.
func (fk *OriginalsKeeper) DeleteOriginals(ctx context.Context, userID string, sessionIDs []string) (int, error) {
	return call(fk.DeleteOriginalsFn, "OriginalsKeeper.DeleteOriginals")(ctx, userID, sessionIDs)
}
