package fake

import (
	"context"

	"github.com/loomhq/loom"
)

// Reader is a fake loom.Reader.
type Reader struct {
	MessagesFn     func(ctx context.Context, sessionID string, q loom.MessageQuery) ([]*loom.Message, error)
	ContextFn      func(ctx context.Context, sessionID string) ([]*loom.Message, error)
	SessionFn      func(ctx context.Context, id string) (*loom.Session, error)
	ReadSessionsFn func(ctx context.Context, ids []string, q loom.MessageQuery) ([]*loom.SessionData, error)
	ResolveFn      func(ctx context.Context, ref string, scope loom.ResolveScope) (*loom.Session, error)
	SessionsFn     func(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error)
	SummariesFn    func(ctx context.Context, f loom.SessionFilter) ([]*loom.SessionSummary, error)
	FamilyFn       func(ctx context.Context, q loom.FamilyQuery) ([]*loom.Session, error)
	SearchFn       func(ctx context.Context, q loom.SearchQuery) ([]loom.SearchHit, error)
	UsageFn        func(ctx context.Context, f loom.UsageFilter) (*loom.UsageReport, error)
	UsageSlicesFn  func(ctx context.Context, f loom.UsageSliceFilter) ([]loom.UsageSlice, error)
	ReadsFn        func() loom.Reads
}

var _ loom.Reader = (*Reader)(nil)

// Messages calls MessagesFn.
func (fk *Reader) Messages(ctx context.Context, sessionID string, q loom.MessageQuery) ([]*loom.Message, error) {
	return call(fk.MessagesFn, "Reader.Messages")(ctx, sessionID, q)
}

// Context calls ContextFn.
func (fk *Reader) Context(ctx context.Context, sessionID string) ([]*loom.Message, error) {
	return call(fk.ContextFn, "Reader.Context")(ctx, sessionID)
}

// Session calls SessionFn.
func (fk *Reader) Session(ctx context.Context, id string) (*loom.Session, error) {
	return call(fk.SessionFn, "Reader.Session")(ctx, id)
}

// ReadSessions calls ReadSessionsFn.
func (fk *Reader) ReadSessions(ctx context.Context, ids []string, q loom.MessageQuery) ([]*loom.SessionData, error) {
	return call(fk.ReadSessionsFn, "Reader.ReadSessions")(ctx, ids, q)
}

// Resolve calls ResolveFn.
func (fk *Reader) Resolve(ctx context.Context, ref string, scope loom.ResolveScope) (*loom.Session, error) {
	return call(fk.ResolveFn, "Reader.Resolve")(ctx, ref, scope)
}

// Sessions calls SessionsFn.
func (fk *Reader) Sessions(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error) {
	return call(fk.SessionsFn, "Reader.Sessions")(ctx, f)
}

// Summaries calls SummariesFn.
func (fk *Reader) Summaries(ctx context.Context, f loom.SessionFilter) ([]*loom.SessionSummary, error) {
	return call(fk.SummariesFn, "Reader.Summaries")(ctx, f)
}

// Family calls FamilyFn.
func (fk *Reader) Family(ctx context.Context, q loom.FamilyQuery) ([]*loom.Session, error) {
	return call(fk.FamilyFn, "Reader.Family")(ctx, q)
}

// Search calls SearchFn.
func (fk *Reader) Search(ctx context.Context, q loom.SearchQuery) ([]loom.SearchHit, error) {
	return call(fk.SearchFn, "Reader.Search")(ctx, q)
}

// Usage calls UsageFn.
func (fk *Reader) Usage(ctx context.Context, f loom.UsageFilter) (*loom.UsageReport, error) {
	return call(fk.UsageFn, "Reader.Usage")(ctx, f)
}

// UsageSlices calls UsageSlicesFn.
func (fk *Reader) UsageSlices(ctx context.Context, f loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	return call(fk.UsageSlicesFn, "Reader.UsageSlices")(ctx, f)
}

// Reads calls ReadsFn.
func (fk *Reader) Reads() loom.Reads {
	return call(fk.ReadsFn, "Reader.Reads")()
}
