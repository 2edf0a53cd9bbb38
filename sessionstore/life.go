package sessionstore

import (
	"context"
	"fmt"

	"github.com/loomhq/loom/synclog"
)

// loadLife returns whether session id is in the trash as merged from
// records (Life); the zero Life when no record has trashed,
// restored or worked in it.
func loadLife(ctx context.Context, tx StampSteps, id string) (Life, error) {
	return loadState[Life](ctx, tx, LifeState, id)
}

// saveLife stores l as session id's.
func saveLife(ctx context.Context, tx StampSteps, id string, l Life) error {
	return saveState(ctx, tx, LifeState, id, l)
}

// settleLife stores l as session id's and puts the session in the trash
// or out of it as l says. A session no trash or restore record has
// touched keeps the state it has: one trashed before sync was set up
// stays in the trash.
func settleLife(ctx context.Context, tx Tx, id string, l Life) error {
	if err := saveLife(ctx, tx, id, l); err != nil {
		return err
	}
	if l.Trash == nil && l.Restore.IsZero() {
		return nil
	}
	// A session that comes back claims its key again, and one that goes
	// lets it go: settleKey gives it to the earliest claim. It comes
	// back without it, so that the session holding it meanwhile is not
	// in the way.
	changed, err := tx.SetDeleted(ctx, id, l.DeletedAt())
	if err != nil {
		return fmt.Errorf("trash state of %s: %w", id, err)
	}
	if !changed {
		return nil
	}
	k, err := scopeOf(ctx, tx, id)
	if err != nil {
		return err
	}
	return settleKey(ctx, tx, k)
}

// worked merges record idx of host h, which did work in session id
// (appends, part and usage updates, rewinds), into the session's life:
// work a trash had not seen takes the session out of the trash.
func worked(ctx context.Context, tx Tx, id string, h synclog.HostID, idx int64) error {
	l, err := loadLife(ctx, tx, id)
	if err != nil {
		return err
	}
	l.Worked(h, idx)
	return settleLife(ctx, tx, id, l)
}

// touched merges record idx of host h, which restored session id or
// changed its metadata, or made it when made, into the session's life
// (Rescue), when the session is here.
func touched(ctx context.Context, tx interface {
	SessionSteps
	StampSteps
}, id string, h synclog.HostID, idx int64, made bool) error {
	if cur, err := tx.SessionForWrite(ctx, id); err != nil || cur == nil {
		return err
	}
	l, err := loadLife(ctx, tx, id)
	if err != nil {
		return err
	}
	if made {
		l.MadeBy(h, idx)
	} else {
		l.Touch(h, idx)
	}
	return saveLife(ctx, tx, id, l)
}

// touchedIn returns the sessions record p restores or changes the
// metadata of.
func touchedIn(p synclog.Payload) []string {
	switch p := p.(type) {
	case *synclog.Restored:
		return p.SessionIDs
	case *synclog.SessionChanged:
		return []string{p.SessionID}
	}
	return nil
}

// lived merges record idx of host h into the lives of the sessions it
// works in (worked) and restores or changes (touched).
func lived(ctx context.Context, tx Tx, h synclog.HostID, idx int64, p synclog.Payload) error {
	if id := workedIn(p); id != "" {
		if err := worked(ctx, tx, id, h, idx); err != nil {
			return err
		}
	}
	for _, id := range touchedIn(p) {
		if err := touched(ctx, tx, id, h, idx, false); err != nil {
			return err
		}
	}
	if id := madeIn(p); id != "" {
		return touched(ctx, tx, id, h, idx, true)
	}
	return nil
}

// madeIn returns the fork record p makes, "" for a record that makes
// none.
func madeIn(p synclog.Payload) string {
	switch p := p.(type) {
	case *synclog.Forked:
		return p.Session.ID
	case *synclog.Rewound:
		return p.Fork.ID
	}
	return ""
}

// workedIn returns the session in which record p does work that a
// trash must have seen, "" for a record that does none. Archiving, or
// bringing back from the archive, is such work: a session archived on
// one machine while another pruned it stays out of the trash, as prune
// never takes an archived session.
func workedIn(p synclog.Payload) string {
	switch p := p.(type) {
	case *synclog.SessionChanged:
		if p.Archive != nil {
			return p.SessionID
		}
	case *synclog.MessagesAppended:
		return p.SessionID
	case *synclog.PartUpdated:
		return p.SessionID
	case *synclog.UsageUpdated:
		return p.SessionID
	case *synclog.TimesSettled:
		return p.SessionID
	case *synclog.Rewound:
		return p.SessionID
	}
	return ""
}

// markPurged keeps that sessions ids are purged.
func markPurged(ctx context.Context, tx LineageSteps, ids []string) error {
	for _, id := range ids {
		if err := tx.MarkPurged(ctx, id); err != nil {
			return fmt.Errorf("keep purge of %s: %w", id, err)
		}
	}
	return nil
}

// forPurged reports whether record p is for a session purged here: such
// a record is dropped, as a purge is final. A fork of a purged session
// is dropped too, as its parent's messages are gone.
func forPurged(ctx context.Context, tx LineageSteps, p synclog.Payload) (bool, error) {
	var id string
	switch p := p.(type) {
	case *synclog.SessionCreated:
		id = p.Session.ID
	case *synclog.SessionChanged:
		id = p.SessionID
	case *synclog.Forked:
		for _, x := range []string{p.Session.ID, p.Session.ParentID} {
			if gone, err := tx.Purged(ctx, x); err != nil || gone {
				// A fork of a purged session goes too: the records
				// for it that follow are dropped as well.
				if err == nil && gone && x != p.Session.ID {
					err = tx.MarkPurged(ctx, p.Session.ID)
				}
				return gone, err
			}
		}
		return false, nil
	case *synclog.Rewound:
		gone, err := tx.Purged(ctx, p.SessionID)
		if err == nil && gone {
			// So does the fork its rewind would have made.
			err = tx.MarkPurged(ctx, p.Fork.ID)
		}
		return gone, err
	case *synclog.OriginalKept:
		// The originals of a purged session went with it.
		id = p.SessionID
	default:
		id = workedIn(p)
	}
	if id == "" {
		return false, nil
	}
	return tx.Purged(ctx, id)
}

// applyTrashed merges trash record p into each of its sessions here.
func applyTrashed(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.Trashed) error {
	return eachLife(ctx, tx, p.Type(), p.SessionIDs, func(l *Life) { l.Trashed(st, p) })
}

// applyRestored merges restore record p into each of its sessions here.
func applyRestored(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.Restored) error {
	return eachLife(ctx, tx, p.Type(), p.SessionIDs, func(l *Life) { l.Restored(st) })
}

// eachLife merges a trash or restore record of type t into the lives of
// sessions ids, by merge, skipping those purged here; a session neither
// here nor purged has not arrived yet, and the record waits for it.
func eachLife(ctx context.Context, tx Tx, t synclog.Type, ids []string, merge func(*Life)) error {
	for _, id := range ids {
		if gone, err := tx.Purged(ctx, id); err != nil {
			return err
		} else if gone {
			continue
		}
		cur, err := tx.SessionForWrite(ctx, id)
		if err != nil {
			return err
		}
		if cur == nil {
			return fmt.Errorf("%w: a %s record of session %s, which this store does not hold", ErrWaits, t, id)
		}
		l, err := loadLife(ctx, tx, id)
		if err != nil {
			return err
		}
		merge(&l)
		if err := settleLife(ctx, tx, id, l); err != nil {
			return err
		}
	}
	return nil
}

// eachLocalLife merges a trash or restore this store made into the
// lives of sessions ids, which its own change has put in or out of the
// trash already, and settles their keys as applying it does (settleLife):
// a key the trash let go goes to the next claim, a claim back from the
// trash takes its place again.
func eachLocalLife(ctx context.Context, tx interface {
	StampSteps
	KeySteps
}, ids []string, merge func(*Life)) error {
	for _, id := range ids {
		l, err := loadLife(ctx, tx, id)
		if err != nil {
			return err
		}
		merge(&l)
		if err := saveLife(ctx, tx, id, l); err != nil {
			return err
		}
		k, err := scopeOf(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := settleKey(ctx, tx, k); err != nil {
			return err
		}
	}
	return nil
}
