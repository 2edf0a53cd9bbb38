package loom

// Services are the parts of an engine's store beyond Store, one field
// per capability, each nil where the engine does not provide it. An
// engine returns them explicitly (Engine.Services), and an edge takes
// the one it needs from there, never by asking a store what else it is:
// so a store handed on (opened by the command line, the server, a test)
// keeps everything its engine provides, and a capability can be
// followed by the compiler from the engine to every edge that uses it.
//
// Two are required of every engine that imports (the conformance suite
// fails on a nil one): Calls, without which a conversation an agent
// copies into a new file is counted twice, and SourceLocks, without
// which a hook and a watcher importing one file at once store its
// messages twice. The others an engine may declare absent; the edge that
// needs one says the store does not provide it.
//
// Which engine provides what (docs/architecture.md):
//
//	capability     sqlite  postgres  memstore (rules' tests)
//	Calls          yes     yes       no
//	SourceLocks    yes     yes       yes
//	ImportApplier  yes     yes       yes
//	ProjectMover   yes     yes       yes
//	Originals      yes     yes       no
//	Tokens         yes     yes       no
//	Shares         yes     yes       no
//	Sync           yes     yes       no
//	HubLocks       no      yes       no
//	TeamHub        no      yes       no
//	Vectors        yes     yes       no
//	Edits          yes     yes       no
//	EditVersions   yes     yes       no
//	Roots          yes     yes       no
//	Activity       yes     yes       no
//	IndexSize      yes     yes       no
type Services struct {
	// Calls finds which session counts a model call. Required.
	Calls CallCounter
	// SourceLocks serialises the importers of one source file.
	// Required.
	SourceLocks SourceLocker
	// ImportApplier writes an import's batch in one transaction
	// (WriteImport writes it piece by piece without it).
	ImportApplier ImportApplier
	// ProjectMover moves a project's sessions to another project.
	ProjectMover ProjectMover
	// Originals keeps the bytes of imported source files.
	Originals OriginalsKeeper
	// Tokens keeps the API tokens loom serve accepts.
	Tokens TokenStore
	// Shares keeps sealed shared sessions.
	Shares ShareStore
	// Sync holds the records of a sync hub.
	Sync SyncStore
	// HubLocks are a hub's locks over every process on the store.
	HubLocks HubLocks
	// TeamHub holds a team's chain and records on a hub.
	TeamHub TeamHub
	// Vectors keeps the vectors of search by meaning.
	Vectors VectorStore
	// Edits is the index of file edits that loom blame reads.
	Edits EditStore
	// EditVersions says when the edit index last changed.
	EditVersions EditVersioner
	// Roots lists the project roots sessions recorded.
	Roots RootLister
	// Activity reads what was done when, for insights.
	Activity ActivityReader
	// IndexSize measures the search index.
	IndexSize IndexSizer
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
