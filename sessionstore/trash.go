package sessionstore

import (
	"context"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/synclog"
)

// TrashSteps are the steps of Delete, Restore and Prune.
type TrashSteps interface {
	// Family returns session id and its sub-agent sessions, of every
	// generation, with their locks, for their removal: the live ones,
	// and those in the trash too with trashed. Where locks are read
	// apart from rows, the engine keeps them from changing until the
	// transaction ends.
	Family(ctx context.Context, id string, trashed bool) ([]*loom.Session, error)
	// Prunable returns the sessions a prune with opts at now selects
	// (see loom.PruneOptions), oldest first, with their locks.
	Prunable(ctx context.Context, opts loom.PruneOptions, now time.Time) ([]*loom.Session, error)
	// EmptyTrash purges the sessions trashed before before and returns
	// their ids.
	EmptyTrash(ctx context.Context, before time.Time) ([]string, error)
	// Purge removes session id and its sub-agent sessions for good.
	Purge(ctx context.Context, id string) error
	// Trash moves the live sessions of the families of ids to the trash
	// at at, and returns the ids of the sessions it moved.
	Trash(ctx context.Context, ids []string, at time.Time) ([]string, error)
	// Untrash brings back the sessions of id's family trashed at at,
	// returning their ids, or reporting whether a key another live
	// session took meanwhile stopped it.
	Untrash(ctx context.Context, id string, at time.Time) (restored []string, taken bool, err error)
}

// deleteIn is Store.Delete of session id at now by the store handle owner,
// inside tx: the session goes with its sub-agent sessions, unless
// another live holder than owner has one of them (and not opts.Force);
// trash older than loom.TrashTTL is purged at the same time. It returns
// the sessions removed, the session first, then its sub-agent sessions
// in Family order; trashed ones carry their DeletedAt.
func deleteIn(ctx context.Context, tx interface {
	SessionSteps
	TrashSteps
}, log *SyncLog, id string, opts loom.DeleteOptions, owner string, now time.Time) ([]*loom.Session, error) {
	if _, err := tx.Session(ctx, id); err != nil {
		return nil, err
	}
	fam, err := tx.Family(ctx, id, opts.Purge)
	if err != nil {
		return nil, fmt.Errorf("delete %s: %w", id, err)
	}
	if !opts.Force {
		if err := loom.CheckNotHeld(fam, owner); err != nil {
			return nil, err
		}
	}
	if err := emptyTrash(ctx, tx, log, now); err != nil {
		return nil, err
	}
	ids := make([]string, len(fam))
	for i, x := range fam {
		ids[i] = x.ID
	}
	if opts.Purge {
		kept, err := purgedData(ctx, log, fam)
		if err != nil {
			return nil, fmt.Errorf("delete %s: %w", id, err)
		}
		if err := tx.Purge(ctx, id); err != nil {
			return nil, fmt.Errorf("delete %s: %w", id, err)
		}
		if err := recordPurge(ctx, log, ids, kept); err != nil {
			return nil, err
		}
	} else {
		at := now.UTC().Truncate(time.Millisecond)
		trashed, err := tx.Trash(ctx, []string{id}, at)
		if err != nil {
			return nil, fmt.Errorf("delete %s: %w", id, err)
		}
		if err := recordTrash(ctx, log, trashed, at); err != nil {
			return nil, err
		}
		for _, x := range fam {
			x.DeletedAt = &at
		}
	}
	return loom.ArrangeFamily(loom.FamilyQuery{IDs: []string{id}, SubagentsOnly: true}, fam), nil
}

// trashedBefore is the time before which sessions in the trash at now
// are purged: TrashTTL ago.
func trashedBefore(now time.Time) time.Time { return now.Add(-loom.TrashTTL) }

// restoreIn is Store.Restore of session id inside tx: it must be in the
// trash; it comes back with the sessions of its family that went to the
// trash with it (at the time they were trashed), unless a key another
// live session has taken meanwhile stops it.
func restoreIn(ctx context.Context, tx interface {
	SessionSteps
	TrashSteps
}, log *SyncLog, id string) error {
	x, err := tx.Session(ctx, id)
	if err != nil {
		return err
	}
	if x.DeletedAt == nil {
		return loom.Errorf(loom.EINVALID, "session %s is not in the trash", x.ID)
	}
	restored, taken, err := tx.Untrash(ctx, x.ID, *x.DeletedAt)
	switch {
	case taken:
		return loom.Errorf(loom.ECONFLICT, "cannot restore %s: another session now has its key %q", x.ID, x.Key)
	case err != nil:
		return fmt.Errorf("restore %s: %w", x.ID, err)
	}
	return recordIn(ctx, log, func(log *SyncLog) (synclog.Payload, error) {
		return &synclog.Restored{SessionIDs: restored}, nil
	})
}

// pruneIn is Store.Prune of opts, validated, at now by the store handle
// owner, inside tx: the sessions selected go to the trash (so a prune is undone by restore
// for loom.TrashTTL), but for those another live holder than owner has,
// which are skipped; a dry run only reports.
func pruneIn(ctx context.Context, tx TrashSteps, log *SyncLog, opts loom.PruneOptions, owner string, now time.Time) (*loom.PruneResult, error) {
	selected, err := tx.Prunable(ctx, opts, now)
	if err != nil {
		return nil, fmt.Errorf("prune: %w", err)
	}
	res := splitPrune(selected, owner)
	if opts.DryRun {
		return res, nil
	}
	if err := emptyTrash(ctx, tx, log, now); err != nil {
		return nil, err
	}
	if len(res.Removed) > 0 {
		ids := make([]string, len(res.Removed))
		for i, x := range res.Removed {
			ids[i] = x.ID
		}
		at := now.UTC().Truncate(time.Millisecond)
		trashed, err := tx.Trash(ctx, ids, at)
		if err != nil {
			return nil, fmt.Errorf("prune: %w", err)
		}
		if err := recordTrash(ctx, log, trashed, at); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// emptyTrash purges the sessions in the trash for longer than
// loom.TrashTTL at now, recording their purge.
func emptyTrash(ctx context.Context, tx TrashSteps, log *SyncLog, now time.Time) error {
	purged, err := tx.EmptyTrash(ctx, trashedBefore(now))
	if err != nil {
		return fmt.Errorf("empty trash: %w", err)
	}
	return recordPurge(ctx, log, purged, nil)
}

// recordTrash records that the sessions ids went to the trash at at,
// with what the store had seen: work it had not seen keeps a session
// out of the trash on the hosts that did it (Life).
func recordTrash(ctx context.Context, log *SyncLog, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	return recordIn(ctx, log, func(log *SyncLog) (synclog.Payload, error) {
		seen, err := log.Seen(ctx)
		return &synclog.Trashed{SessionIDs: ids, At: at, Seen: seen}, err
	})
}

// recordPurge records that the sessions ids are gone for good, with what
// the store had seen (Rescue), and keeps kept, what the purge took of
// them, with it (PurgeKept).
func recordPurge(ctx context.Context, log *SyncLog, ids []string, kept []*loom.SessionData) error {
	if len(ids) == 0 || log == nil {
		return nil
	}
	seen, err := log.Seen(ctx)
	if err != nil {
		return fmt.Errorf("sync log: %w", err)
	}
	p := &synclog.Purged{SessionIDs: ids, Seen: seen}
	st, idx, err := log.recordAt(ctx, p)
	if err != nil {
		return fmt.Errorf("sync log: %w", err)
	}
	data := make(map[string]*loom.SessionData, len(kept))
	for _, d := range kept {
		data[d.Session.ID] = d
	}
	for _, id := range ids {
		k := PurgeKept{Stamp: st, Index: idx, Seen: seen, Data: data[id]}
		if err := saveState(ctx, log.tx, PurgeKeptState, id, k); err != nil {
			return fmt.Errorf("sync log: %w", err)
		}
	}
	return nil
}

// purgedData returns sessions fam, which a purge is about to take, with
// their messages, to keep in log beside the purge (PurgeKept); nil when
// the store keeps no log.
//
// What it keeps is bounded, so that a purge costs little memory and time
// whatever it takes: at most recordChunk messages in all, of sessions
// each within one record's size (chunkLen). A session beyond that is not
// kept: the copy of work its purge had not seen then comes from the
// machine whose work it is, at its sync after it applied the purge, as
// for a purge that keeps nothing.
func purgedData(ctx context.Context, log *SyncLog, fam []*loom.Session) ([]*loom.SessionData, error) {
	if log == nil {
		return nil, nil
	}
	out := make([]*loom.SessionData, 0, len(fam))
	room := recordChunk
	for _, x := range fam {
		if x.MessageCount > room {
			continue
		}
		msgs, err := log.tx.Messages(ctx, x.ID, 1, span.OpenSeq)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", x.ID, err)
		}
		if len(msgs) > room || ChunkLen(msgs) < len(msgs) {
			continue
		}
		room -= len(msgs)
		out = append(out, &loom.SessionData{Session: x, Messages: msgs})
	}
	return out, nil
}

// splitPrune sorts the sessions a prune selected into those it removes
// and those it skips, because another live holder than owner has them.
func splitPrune(selected []*loom.Session, owner string) *loom.PruneResult {
	res := &loom.PruneResult{}
	for _, x := range selected {
		if x.HeldElsewhere(owner) {
			res.Skipped = append(res.Skipped, x)
		} else {
			res.Removed = append(res.Removed, x)
		}
	}
	return res
}
