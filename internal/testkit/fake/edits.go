package fake

import (
	"context"

	"github.com/loomhq/loom"
)

// EditStore is a fake loom.EditStore.
type EditStore struct {
	UnindexedEditsFn func(ctx context.Context, n int) ([]loom.EditSource, error)
	PutEditsFn       func(ctx context.Context, done []loom.EditSource, edits []loom.IndexedEdit) error
	EditsFn          func(ctx context.Context, q loom.EditQuery) ([]loom.FileEdit, error)
	ProjectRootsFn   func(ctx context.Context, userID, projectID string) ([]string, error)
}

var _ loom.EditStore = (*EditStore)(nil)

// UnindexedEdits calls UnindexedEditsFn.
func (fk *EditStore) UnindexedEdits(ctx context.Context, n int) ([]loom.EditSource, error) {
	return call(fk.UnindexedEditsFn, "EditStore.UnindexedEdits")(ctx, n)
}

// PutEdits calls PutEditsFn.
func (fk *EditStore) PutEdits(ctx context.Context, done []loom.EditSource, edits []loom.IndexedEdit) error {
	return call(fk.PutEditsFn, "EditStore.PutEdits")(ctx, done, edits)
}

// Edits calls EditsFn.
func (fk *EditStore) Edits(ctx context.Context, q loom.EditQuery) ([]loom.FileEdit, error) {
	return call(fk.EditsFn, "EditStore.Edits")(ctx, q)
}

// ProjectRoots calls ProjectRootsFn.
func (fk *EditStore) ProjectRoots(ctx context.Context, userID, projectID string) ([]string, error) {
	return call(fk.ProjectRootsFn, "EditStore.ProjectRoots")(ctx, userID, projectID)
}

// EditVersioner is a fake loom.EditVersioner.
type EditVersioner struct {
	EditVersionFn func(ctx context.Context) (version string, err error)
}

var _ loom.EditVersioner = (*EditVersioner)(nil)

// EditVersion calls EditVersionFn.
func (fk *EditVersioner) EditVersion(ctx context.Context) (version string, err error) {
	return call(fk.EditVersionFn, "EditVersioner.EditVersion")(ctx)
}

// RootLister is a fake loom.RootLister.
type RootLister struct {
	RecordedRootsFn func(ctx context.Context, userID string) ([]loom.RecordedRoot, error)
}

var _ loom.RootLister = (*RootLister)(nil)

// RecordedRoots calls RecordedRootsFn.
func (fk *RootLister) RecordedRoots(ctx context.Context, userID string) ([]loom.RecordedRoot, error) {
	return call(fk.RecordedRootsFn, "RootLister.RecordedRoots")(ctx, userID)
}
