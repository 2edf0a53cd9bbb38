// Package synclog is the record log that sync is made of: every change a
// store makes becomes a record in its host's own append-only log, and a
// store's state on any machine is what applying every host's log gives.
//
// The package is the record format and nothing else: the hybrid logical
// clock that stamps records (HLC, Clock), a record's header (Header), its
// payload types and what each must hold (Payload, Validate), and their
// encoding (Encode, Decode, Split, Join, Seal, Open). It does no I/O and
// decides nothing about how a record merges into a store: those rules
// are package sessionstore's (apply.go and the rule files), which
// applies records. The stores
// capture records, the hub stores them, and `loom sync` moves them.
// docs/sync.md describes the design, and what is not built yet.
package synclog
