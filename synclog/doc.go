// Package synclog is the record log that sync is made of: every change a
// store makes becomes a record in its host's own append-only log, and a
// store's state on any machine is what applying every host's log gives.
//
// The package holds what every host must agree on and nothing else: the
// hybrid logical clock that stamps records (HLC, Clock), a record's
// header (Header) and payload types (Payload, Encode, Decode, Seal,
// Open), and the merge rules, as pure functions: per-field last writer
// wins for metadata (Meta), where concurrent appends to one session go
// (PlanAppend, ConflictForkID), whether a session is in the trash (Life)
// and when a purge must save a copy (Rescue). It does no I/O; the stores
// capture and apply records, the hub stores them, and `loom sync` moves
// them. docs/sync.md describes the design, and what is not built yet.
package synclog
