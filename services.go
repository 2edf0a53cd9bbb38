package loom

// Engine is a store with the services its engine provides: what an
// engine's Open returns, and what the command line, the server and the
// tests hand on.
//
// The services every engine must provide are part of its type: an
// engine that lacks one does not compile, so no edge checks for one at
// run time and none can be silently missing. Without CallCounter, a
// conversation an agent copies into a new file is counted twice;
// without SourceLocker, a hook and a watcher importing one file at once
// store its messages twice; without ImportApplier, an import is not
// written in one transaction; without ProjectMover, a failed move
// leaves a project split; without OriginalsKeeper, imported source
// files are not kept; without SyncStore, the store can be no sync hub;
// without EditStore and EditVersioner, loom blame finds nothing and
// keeps no answer from one run to the next.
//
// The services an engine may lack are declared in one place, Optional,
// and returned by Engine.Optional: an edge takes the one it needs from
// there, never by asking a store what else it is, and says the store
// does not provide it when it is nil.
//
// Which engine provides what (docs/architecture.md, "An engine's
// services"):
//
//	service          sqlite  postgres  memstore (rules' tests)
//	required, by the type of Engine:
//	CallCounter      yes     yes       no
//	SourceLocker     yes     yes       yes
//	ImportApplier    yes     yes       yes
//	ProjectMover     yes     yes       yes
//	OriginalsKeeper  yes     yes       no
//	SyncStore        yes     yes       no
//	EditStore        yes     yes       no
//	EditVersioner    yes     yes       no
//	optional, fields of Optional:
//	Tokens           yes     yes       no
//	Shares           yes     yes       no
//	HubLocks         no      yes       no
//	TeamHub          no      yes       no
//	Vectors          yes     yes       no
//	Roots            yes     yes       no
//	Activity         yes     yes       no
//	IndexSize        yes     yes       no
//	IndexMerger      yes     no        no
//	Scrubber         yes     yes       no
//	ScrubMarker      yes     no        no
//	LocalLog         yes     no        no
//
// The store in memory of sessionstore's rules' tests (internal/memstore)
// is no Engine: it serves only what those rules write through.
type Engine interface {
	Store
	CallCounter
	SourceLocker
	ImportApplier
	ProjectMover
	OriginalsKeeper
	SyncStore
	EditStore
	EditVersioner

	// Optional returns the engine's optional services, nil where it has
	// none. It is the same value at every call.
	Optional() Optional
}

// Optional are the services an engine may lack, one field per
// capability, each nil where the engine does not provide it. The
// conformance suite (conformance.Capabilities) says what is missing
// without each, and skips the test of its contract on an engine that
// leaves it nil.
type Optional struct {
	// Tokens keeps the API tokens loom serve accepts.
	Tokens TokenStore
	// Shares keeps sealed shared sessions.
	Shares ShareStore
	// HubLocks are a hub's locks over every process on the store.
	HubLocks HubLocks
	// TeamHub holds a team's chain and records on a hub.
	TeamHub TeamHub
	// TeamCheckpoints keeps a hub's checkpoints of teams' chains.
	TeamCheckpoints TeamCheckpoints
	// Vectors keeps the vectors of search by meaning.
	Vectors VectorStore
	// Roots lists the project roots sessions recorded.
	Roots RootLister
	// Activity reads what was done when, for insights.
	Activity ActivityReader
	// IndexSize measures the search index.
	IndexSize IndexSizer
	// IndexMerger merges the search index after a large import.
	IndexMerger IndexMerger
	// Scrubber removes from the store's files what rewritten messages
	// leave behind.
	Scrubber Scrubber
	// ScrubMarker keeps that the store is to be scrubbed until it is.
	ScrubMarker ScrubMarker
	// LocalLog is the store's own sync log, which a redaction
	// rewrites.
	LocalLog LocalLog
}
