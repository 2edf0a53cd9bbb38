package fake

import (
	"context"

	"github.com/loomhq/loom"
)

// VectorReader is a fake loom.VectorReader.
type VectorReader struct {
	UnembeddedFn   func(ctx context.Context, n, maxChars int) (chunks []loom.Chunk, upTo int64, err error)
	VectorsFn      func(ctx context.Context, fn func(loom.Vector) error) (model string, err error)
	VectorHitsFn   func(ctx context.Context, q loom.SearchQuery, ids []int64, scores []float64) ([]loom.SearchHit, error)
	VectorStatusFn func(ctx context.Context) (loom.VectorStatus, error)
}

var _ loom.VectorReader = (*VectorReader)(nil)

// Unembedded calls UnembeddedFn.
func (fk *VectorReader) Unembedded(ctx context.Context, n, maxChars int) (chunks []loom.Chunk, upTo int64, err error) {
	return call(fk.UnembeddedFn, "VectorReader.Unembedded")(ctx, n, maxChars)
}

// Vectors calls VectorsFn.
func (fk *VectorReader) Vectors(ctx context.Context, fn func(loom.Vector) error) (model string, err error) {
	return call(fk.VectorsFn, "VectorReader.Vectors")(ctx, fn)
}

// VectorHits calls VectorHitsFn.
func (fk *VectorReader) VectorHits(ctx context.Context, q loom.SearchQuery, ids []int64, scores []float64) ([]loom.SearchHit, error) {
	return call(fk.VectorHitsFn, "VectorReader.VectorHits")(ctx, q, ids, scores)
}

// VectorStatus calls VectorStatusFn.
func (fk *VectorReader) VectorStatus(ctx context.Context) (loom.VectorStatus, error) {
	return call(fk.VectorStatusFn, "VectorReader.VectorStatus")(ctx)
}

// VectorStore is a fake loom.VectorStore.
type VectorStore struct {
	VectorReader
	UseVectorModelFn func(ctx context.Context, model string) error
	ClaimVectorsFn   func(ctx context.Context) (release func(), ok bool, err error)
	PutVectorsFn     func(ctx context.Context, model string, upTo int64, vecs []loom.Vector) error
}

var _ loom.VectorStore = (*VectorStore)(nil)

// UseVectorModel calls UseVectorModelFn.
func (fk *VectorStore) UseVectorModel(ctx context.Context, model string) error {
	return call(fk.UseVectorModelFn, "VectorStore.UseVectorModel")(ctx, model)
}

// ClaimVectors calls ClaimVectorsFn.
func (fk *VectorStore) ClaimVectors(ctx context.Context) (release func(), ok bool, err error) {
	return call(fk.ClaimVectorsFn, "VectorStore.ClaimVectors")(ctx)
}

// PutVectors calls PutVectorsFn.
func (fk *VectorStore) PutVectors(ctx context.Context, model string, upTo int64, vecs []loom.Vector) error {
	return call(fk.PutVectorsFn, "VectorStore.PutVectors")(ctx, model, upTo, vecs)
}

// ActivityReader is a fake loom.ActivityReader.
type ActivityReader struct {
	ActivityFn func(ctx context.Context, f loom.ActivityFilter) (*loom.Activity, error)
}

var _ loom.ActivityReader = (*ActivityReader)(nil)

// Activity calls ActivityFn.
func (fk *ActivityReader) Activity(ctx context.Context, f loom.ActivityFilter) (*loom.Activity, error) {
	return call(fk.ActivityFn, "ActivityReader.Activity")(ctx, f)
}

// IndexSizer is a fake loom.IndexSizer.
type IndexSizer struct {
	IndexSizeFn func(ctx context.Context) (int64, error)
}

var _ loom.IndexSizer = (*IndexSizer)(nil)

// IndexSize calls IndexSizeFn.
func (fk *IndexSizer) IndexSize(ctx context.Context) (int64, error) {
	return call(fk.IndexSizeFn, "IndexSizer.IndexSize")(ctx)
}

// IndexMerger is a fake loom.IndexMerger.
type IndexMerger struct {
	MergeIndexFn func(ctx context.Context) error
}

var _ loom.IndexMerger = (*IndexMerger)(nil)

// MergeIndex calls MergeIndexFn.
func (fk *IndexMerger) MergeIndex(ctx context.Context) error {
	return call(fk.MergeIndexFn, "IndexMerger.MergeIndex")(ctx)
}
