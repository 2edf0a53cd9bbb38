package loom

// Services are the parts of an engine's store beyond Store, one field
// per capability, each nil where the engine does not provide it. An
// engine returns them explicitly (Engine.Services), and an edge takes
// the one it needs from there, never by asking a store what else it is:
// so a store handed on (opened by the command line, the server, a test)
// keeps everything its engine provides, and a capability can be
// followed by the compiler from the engine to every edge that uses it.
//
// The conformance suite (conformance.Capabilities) says which an
// engine must provide, and fails on a nil one: Calls and SourceLocks
// above all, whose absence fails silently (without the first, a
// conversation an agent copies into a new file is counted twice;
// without the second, a hook and a watcher importing one file at once
// store its messages twice), and ImportApplier, ProjectMover,
// Originals, Sync, Edits and EditVersions. The others an engine may
// declare absent by leaving them nil; the edge that needs one says the
// store does not provide it.
//
// Which engine provides what (docs/architecture.md, "An engine's
// services"):
//
//	capability     sqlite  postgres  memstore (rules' tests)  conformance
//	Calls          yes     yes       no                       required
//	SourceLocks    yes     yes       yes                      required
//	ImportApplier  yes     yes       yes                      required
//	ProjectMover   yes     yes       yes                      required
//	Originals      yes     yes       no                       required
//	Tokens         yes     yes       no                       optional
//	Shares         yes     yes       no                       optional
//	Sync           yes     yes       no                       required
//	HubLocks       no      yes       no                       optional
//	TeamHub        no      yes       no                       optional
//	Vectors        yes     yes       no                       optional
//	Edits          yes     yes       no                       required
//	EditVersions   yes     yes       no                       required
//	Roots          yes     yes       no                       optional
//	Activity       yes     yes       no                       optional
//	IndexSize      yes     yes       no                       optional
//	IndexMerger    yes     no        no                       optional
//	Scrubber       yes     yes       no                       optional
//	ScrubMarker    yes     no        no                       optional
//	LocalLog       yes     no        no                       optional
type Services struct {
	// Calls finds which session counts a model call. Required.
	Calls CallCounter
	// SourceLocks serialises the importers of one source file.
	// Required.
	SourceLocks SourceLocker
	// ImportApplier writes an import's batch in one transaction
	// (WriteImport writes it piece by piece without it). Required.
	ImportApplier ImportApplier
	// ProjectMover moves a project's sessions to another project.
	// Required.
	ProjectMover ProjectMover
	// Originals keeps the bytes of imported source files. Required.
	Originals OriginalsKeeper
	// Tokens keeps the API tokens loom serve accepts.
	Tokens TokenStore
	// Shares keeps sealed shared sessions.
	Shares ShareStore
	// Sync holds the records of a sync hub. Required.
	Sync SyncStore
	// HubLocks are a hub's locks over every process on the store.
	HubLocks HubLocks
	// TeamHub holds a team's chain and records on a hub.
	TeamHub TeamHub
	// Vectors keeps the vectors of search by meaning.
	Vectors VectorStore
	// Edits is the index of file edits that loom blame reads.
	// Required.
	Edits EditStore
	// EditVersions says when the edit index last changed. Required.
	EditVersions EditVersioner
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

// Engine is a store with the services its engine provides: what an
// engine's Open returns, and what the command line, the server and the
// tests hand on.
type Engine interface {
	Store
	// Services returns the store's services, nil where it has none. It
	// is the same value at every call.
	Services() Services
}
