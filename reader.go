package loom

import "context"

// Reader is what a way out of the machine may read: the MCP tools, loom
// recall and the agents' hooks, hand-off, shares, exports, downloads and
// an agent's history tools. It is the part of Store that a secrets gate
// redacts (package secrets), and a gate is a Reader and nothing else: a
// way out handed one can neither write nor reach a service that reads
// stored text unredacted. An edge that must do either takes that one
// service from the code that opened the engine.
type Reader interface {
	// Messages returns a window of a session's messages in chronological
	// order: the newest q.Limit (all when 0) before q.Before, or the
	// oldest q.Limit with q.Oldest.
	Messages(ctx context.Context, sessionID string, q MessageQuery) ([]*Message, error)
	// Context returns what the model sees: the latest summary message and
	// everything after it (everything when there is no summary).
	Context(ctx context.Context, sessionID string) ([]*Message, error)

	// Session returns a session by its exact id, trashed ones included.
	Session(ctx context.Context, id string) (*Session, error)
	// ReadSessions returns the sessions ids name, in that order, each
	// with the window q of its messages (as Messages reads it), all read
	// in one snapshot of the store: a session's counters describe the
	// very messages returned with it, even while other processes append
	// to it, rewind it or import it. Trashed sessions are included; an
	// id that names no session is left out.
	ReadSessions(ctx context.Context, ids []string, q MessageQuery) ([]*SessionData, error)
	// Resolve finds the session a user means by ref: exact id, then a
	// unique id prefix of at least 4 characters, then key, then title
	// (case-insensitive).
	Resolve(ctx context.Context, ref string, scope ResolveScope) (*Session, error)
	// Sessions lists sessions newest first (by updated time).
	Sessions(ctx context.Context, f SessionFilter) ([]*Session, error)
	// Summaries lists what Sessions lists, in the same order, as
	// summaries: for listings that show no more.
	Summaries(ctx context.Context, f SessionFilter) ([]*SessionSummary, error)
	// Family returns lineage trees in one query: each session q.IDs
	// names with its descendants (forks and sub-agent sessions, or only
	// sub-agent sessions with q.SubagentsOnly), of every generation.
	// Order is depth first: each session is followed by its children
	// and their descendants before its next sibling, siblings oldest
	// first (created time, then id); the families come in the order of
	// q.IDs, and a session that two of them reach appears once, in the
	// first. Sessions in the trash are left out, with what lies below
	// them, and so are ids that name no live session.
	Family(ctx context.Context, q FamilyQuery) ([]*Session, error)

	// Search runs a full-text query over message text, reasoning and tool
	// inputs and outputs, best first.
	Search(ctx context.Context, q SearchQuery) ([]SearchHit, error)
	// Usage sums usage per session, project and model.
	Usage(ctx context.Context, f UsageFilter) (*UsageReport, error)
	// UsageSlices sums usage per quarter hour, surface, project and
	// model, oldest first, for reports over time.
	UsageSlices(ctx context.Context, f UsageSliceFilter) ([]UsageSlice, error)

	// Reads returns the services a way out may read, each nil where the
	// store has none. It is the same value at every call.
	Reads() Reads
}

// Reads are the services of an engine that a way out may read, each
// nil where the engine does not provide it: all optional (the same
// services are in Optional, for the edges that write). Through a
// secrets gate each is read redacted (secrets.Gate.Reads).
type Reads struct {
	// Vectors reads the vectors of search by meaning, and the hits and
	// chunks of text they stand for.
	Vectors VectorReader
	// Activity reads what was done when, for insights.
	Activity ActivityReader
	// IndexSize measures the search index.
	IndexSize IndexSizer
}

// ReadsOf returns the services of svc that a way out may read: how an
// engine implements Reader.Reads.
func ReadsOf(svc Optional) Reads {
	return Reads{Vectors: svc.Vectors, Activity: svc.Activity, IndexSize: svc.IndexSize}
}
