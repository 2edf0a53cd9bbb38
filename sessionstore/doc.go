// Package sessionstore holds every rule of loom's stores, once, and no
// SQL: what each write does (append, fork, rewind, delete, restore,
// prune, the updates of a session, its parts and usage, repairs,
// imports, message rewrites, locks), the sync record each write emits
// (Record, RecordHistory), how the hub keeps records (PutSync), and how
// a record of another host is applied (Apply: conflict forks,
// following lineage, trash and purge, key clashes, stamps) and how a
// store takes a new host id (Rehome). The merge rules are pure
// functions here: per-field last writer wins for metadata (Meta,
// KeyHolder), where concurrent appends to one session go (PlanAppend,
// ConflictForkID, NewerPart), whether a session is in the trash (Life)
// and when a purge must save a copy (Rescue). It decides; the engine's
// transactions (Tx, UpdateTx, ApplyTx) do each step in their SQL and
// decide nothing. The record format is package synclog's. See
// docs/architecture.md and docs/sync.md.
package sessionstore
