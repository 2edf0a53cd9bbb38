package sessionstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// appendIn is Store.Append of msgs to session x, the caller's, at now,
// by the store handle owner, inside tx: it creates the session when no
// session with x's id exists (lazy creation), and returns the session
// as stored after the append, recorded in log.
func appendIn(ctx context.Context, tx SessionSteps, log *SyncLog, x *loom.Session, msgs []*loom.Message, owner string, now time.Time) (*loom.Session, error) {
	// One read gives the counters and the lock.
	cur, err := tx.SessionForWrite(ctx, x.ID)
	if err != nil {
		return nil, err
	}
	if err := checkAppend(x, cur, owner); err != nil {
		return nil, err
	}
	if cur == nil {
		if err := tx.CheckWriter(ctx, x.ID); err != nil {
			return nil, err
		}
		row, err := x.Created(now)
		if err != nil {
			return nil, err
		}
		if err := tx.CreateSession(ctx, row); err != nil {
			return nil, err
		}
		if err := recordIn(ctx, log, func(log *SyncLog) (synclog.Payload, error) {
			return &synclog.SessionCreated{Session: row}, nil
		}); err != nil {
			return nil, err
		}
		// Another writer (an import, a fork with this id) may have
		// created it first: read what is there now.
		if cur, err = tx.SessionForWrite(ctx, x.ID); err != nil {
			return nil, err
		}
		if cur == nil {
			return nil, fmt.Errorf("append to %s: the session row is missing after its creation", x.ID)
		}
		if err := checkAppend(x, cur, owner); err != nil {
			return nil, err
		}
	}
	if len(msgs) == 0 {
		return cur, nil
	}
	cur.ApplyAppend(now, msgs...)
	if err := tx.StoreAppend(ctx, cur, msgs); err != nil {
		return nil, fmt.Errorf("append to %s: %w", x.ID, err)
	}
	err = recordIn(ctx, log, func(log *SyncLog) (synclog.Payload, error) {
		first := msgs[0].Seq
		prev, err := log.MessageID(ctx, cur.ID, first-1)
		return &synclog.MessagesAppended{SessionID: cur.ID, FirstSeq: first, PrevID: prev, Messages: msgs, At: now}, err
	})
	if err != nil {
		return nil, err
	}
	return cur, nil
}

// prepareAppend checks an append before any transaction: it needs a
// session, which gets a new id when it has none, and valid messages.
func prepareAppend(s *loom.Session, msgs []*loom.Message) error {
	if s == nil {
		return loom.Errorf(loom.EINVALID, "append needs a session")
	}
	if s.ID == "" {
		s.ID = loom.NewID()
	}
	for _, m := range msgs {
		if err := m.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// checkAppend is the check of Append on the session stored under the
// id of the session the caller appends to (cur nil when there is none):
// a session the caller already wrote to that is gone was deleted
// meanwhile, and is never brought back with half its history; one in
// the trash takes no messages; one another live holder than owner has
// locked is ELOCKED.
func checkAppend(caller, cur *loom.Session, owner string) error {
	switch {
	case cur == nil && caller.MessageCount > 0:
		return loom.Errorf(loom.ENOTFOUND, "session %s was deleted", caller.ID)
	case cur == nil:
		return nil
	case cur.DeletedAt != nil:
		return loom.Errorf(loom.ENOTFOUND, "session %s is in the trash", caller.ID)
	}
	return loom.CheckNotHeld([]*loom.Session{cur}, owner)
}

// replacePart puts part in the place of m's part with the same id, or
// after its last part when m has none with that id, as Store.UpdatePart
// does to message seq of a session; m is that message, nil when the
// session has none with that seq.
func replacePart(m *loom.Message, sessionID string, seq int64, part loom.Part) error {
	if m == nil {
		return loom.Errorf(loom.ENOTFOUND, "message %d of session %s not found", seq, sessionID)
	}
	if part.ID == "" {
		return loom.Errorf(loom.EINVALID, "part without an id")
	}
	i := slices.IndexFunc(m.Parts, func(p loom.Part) bool { return p.ID == part.ID })
	if i < 0 {
		m.Parts = append(m.Parts, part)
		return nil
	}
	m.Parts[i] = part
	return nil
}
