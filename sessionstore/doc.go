// Package sessionstore holds every rule of loom's stores, once, and no
// SQL. Store is loom.Store's writes, its locks and a hub's put of sync
// records, over an Engine that begins and ends transactions; Replica is
// a syncing store's set-up, apply and rehome, over a ReplicaEngine. An
// engine's store (package sqlite, package postgres) embeds them beside
// its reads; the engine only does each step in its SQL and never calls
// back.
//
// An engine's transaction is a Tx: a struct of small interfaces, one per
// role (SessionSteps, BodySteps, ForkSteps, TrashSteps, ImportSteps,
// SettleSteps, PromptTx, Ender, and for a store that syncs LogRows, ApplySteps,
// MergeSteps, LineageSteps, StampSteps, KeySteps, FragmentSteps,
// HistorySteps), each defined in the rule file that uses it and none of
// more than 12 methods. An engine fills the roles it serves; a rule takes
// the roles it uses.
//
// The rules: what each write does (append, fork, rewind, delete,
// restore, prune, the updates of a session, its parts and usage,
// repairs, imports, project moves, message rewrites, locks), the sync
// record each write emits, which the store's SyncLog encodes, splits
// and stamps over the engine's opaque rows, and the stamps it keeps,
// how the hub keeps records (PutSync), how a record of another host is
// applied (conflict forks, following lineage, trash and purge, key
// clashes, stamps) and how a store takes a new host id (Rehome). The
// merge rules are pure functions here: per-field last writer wins for
// metadata (Meta), where concurrent appends to one session go
// (PlanAppend), whether a session is in the trash (Life) and when a
// purge must save a copy (Rescue). They are tested without a database,
// across machines too, over internal/memstore. The record format is
// package synclog's. See docs/architecture.md and docs/sync.md.
package sessionstore
