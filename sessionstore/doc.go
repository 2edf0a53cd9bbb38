// Package sessionstore holds every rule of loom's stores, once, and no
// SQL. Store is loom.Store's writes, its locks and a hub's put of sync
// records, over an Engine that begins and ends transactions; Replica is
// a syncing store's set-up, apply and rehome, over a ReplicaEngine. An
// engine's store (package sqlite, package postgres) embeds them beside
// its reads; the engine only does each step in its SQL and never calls
// back.
//
// The rules: what each write does (append, fork, rewind, delete,
// restore, prune, the updates of a session, its parts and usage,
// repairs, imports, message rewrites, locks), the sync record each
// write emits (Record, RecordHistory) and the stamps it keeps (Local),
// how the hub keeps records (PutSync), how a record of another host is
// applied (Apply: conflict forks, following lineage, trash and purge,
// key clashes, stamps) and how a store takes a new host id (Rehome).
// The merge rules are pure functions here: per-field last writer wins
// for metadata (Meta, KeyHolder), where concurrent appends to one
// session go (PlanAppend, ConflictForkID, NewerPart), whether a session
// is in the trash (Life) and when a purge must save a copy (Rescue).
// The record format is package synclog's. See docs/architecture.md and
// docs/sync.md.
package sessionstore
