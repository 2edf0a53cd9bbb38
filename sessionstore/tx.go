package sessionstore

import (
	"context"
	"fmt"

	"github.com/loomhq/loom/synclog"
)

// Tx is an engine's write transaction as the rules of this package see
// it: its steps cut by role, each role a small interface owned by the
// rule file that uses it, and each step in the engine's own SQL. A rule
// takes the roles it uses; the few that use many (appendIn, applyIn and the
// writes that dispatch to them) take the Tx, whose fields' methods are
// its own. Every engine serves the roles of a store's sessions; the
// roles of a store that syncs are one value, SyncSteps, which an engine
// serves whole or not at all: a hub's engine (PostgreSQL) keeps no sync
// log, so its Tx's SyncSteps is nil, and a Store on it records nothing.
//
// Every step runs inside the transaction the engine began, so what a
// rule reads stays true until it commits.
type Tx struct {
	SessionSteps
	BodySteps
	ForkSteps
	TrashSteps
	ImportSteps
	SettleSteps
	PromptTx
	// SyncSteps are the roles of a store that syncs, nil for one that
	// keeps no sync log.
	SyncSteps
	// Ender ends the transaction.
	Ender
}

// SyncSteps are the roles of a store that syncs, as one value: its log's
// rows, applying another machine's records, merging, lineage, stamps,
// keys, fragments and history. They are one so that no engine serves
// half of them: a rule that finds the log finds every step it needs.
type SyncSteps interface {
	LogRows
	ApplySteps
	MergeSteps
	LineageSteps
	StampSteps
	KeySteps
	FragmentSteps
	HistorySteps
}

// Ender ends a transaction.
type Ender interface {
	// End ends the transaction: it commits it when err is nil, else
	// rolls it back, and returns the error the write fails with (err,
	// or the commit's), as the engine words it (a full disk, say).
	End(err error) error
}

// recordIn adds the payload build makes to log, the store's sync log, nil
// when it keeps none; build runs only then, with the log, so a store
// that does not sync pays for no payload. A nil payload is a change that
// changed nothing. Every change a store makes is recorded here, by the
// write algorithms of this package.
func recordIn(ctx context.Context, log *SyncLog, build func(log *SyncLog) (synclog.Payload, error)) error {
	if log == nil {
		return nil
	}
	p, err := build(log)
	if err != nil {
		return fmt.Errorf("sync log: %w", err)
	}
	if p == nil {
		return nil
	}
	if err := log.record(ctx, p); err != nil {
		return fmt.Errorf("sync log: %w", err)
	}
	return nil
}
