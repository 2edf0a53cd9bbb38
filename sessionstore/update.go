package sessionstore

import (
	"context"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// updateSession is Store.UpdateSession of session id with u, validated,
// at now, inside tx, recorded in log; it returns the session as stored
// after it. A description u sets only where it is empty
// (DescriptionIfEmpty) is left out of the change, and of its record,
// when the row tx holds has one: the check and the write are one
// transaction, so no description written in between is lost.
func updateSession(ctx context.Context, tx SessionSteps, log *SyncLog, id string, u loom.SessionUpdate, now time.Time) (*loom.Session, error) {
	cur, err := tx.SessionForUpdate(ctx, id)
	if err != nil {
		return nil, err
	}
	if u.DescriptionIfEmpty && cur.Description != "" {
		u.Description = nil
	}
	if err := tx.UpdateRow(ctx, cur.ID, u, now); err != nil {
		return nil, err
	}
	out, err := tx.Session(ctx, cur.ID)
	if err != nil {
		return nil, err
	}
	return out, recordIn(ctx, log, func(*SyncLog) (synclog.Payload, error) { return sessionChanged(out, u), nil })
}

// updatePart is Store.UpdatePart of part, validated, in message seq of
// session id at now, inside tx, recorded in log. A message the session
// inherits (a fork's from its parent) is copied into the session first,
// and a body shared with another message is copied before it is changed
// (writeMessage), so the update never changes another session's history.
func updatePart(ctx context.Context, tx Tx, log *SyncLog, id string, seq int64, part loom.Part, now time.Time) error {
	if err := tx.BeginUpdate(ctx, id); err != nil {
		return err
	}
	m, err := tx.Message(ctx, id, seq)
	if err != nil {
		return err
	}
	before := ""
	if m != nil {
		before = m.Text()
	}
	if err := replacePart(m, id, seq, part); err != nil {
		return err
	}
	if err := rewriteBody(ctx, tx, m, now); err != nil {
		return err
	}
	if err := replacedPrompt(ctx, tx, m, before); err != nil {
		return err
	}
	return recordIn(ctx, log, func(*SyncLog) (synclog.Payload, error) {
		return &synclog.PartUpdated{SessionID: id, Seq: seq, MessageID: m.ID, Part: part}, nil
	})
}

// updateUsage is Store.UpdateUsage of message seq of session id, which
// the session stores itself, inside tx, recorded in log.
func updateUsage(ctx context.Context, tx SessionSteps, log *SyncLog, id string, seq int64, u loom.Usage) error {
	if err := tx.BeginUpdate(ctx, id); err != nil {
		return err
	}
	mid, old, err := tx.OwnUsage(ctx, id, seq)
	if err != nil {
		return err
	}
	if err := tx.MoveUsage(ctx, id, id, seq, old, u); err != nil {
		return fmt.Errorf("update usage of message %d of %s: %w", seq, id, err)
	}
	return recordIn(ctx, log, func(*SyncLog) (synclog.Payload, error) {
		return &synclog.UsageUpdated{SessionID: id, Seq: seq, MessageID: mid, Usage: u}, nil
	})
}

// repairInterrupted is Store.RepairInterrupted of session id at now,
// inside tx, recorded in log: the tool parts of its last turn left
// unfinished (Repair) are stored again, each recorded as a part update,
// which every host merges by its state (newerPart). Only the
// last turn can hold an unfinished tool call: every turn is repaired
// before the next starts. It returns how many parts it repaired.
func repairInterrupted(ctx context.Context, tx interface {
	SessionSteps
	BodySteps
}, log *SyncLog, id string, now time.Time) (int, error) {
	if err := tx.BeginUpdate(ctx, id); err != nil {
		return 0, err
	}
	r := newRepair(now)
	if err := tx.LastTurn(ctx, id, r); err != nil {
		return 0, fmt.Errorf("repair %s: %w", id, err)
	}
	for _, m := range r.Messages {
		if err := rewriteBody(ctx, tx, m, now); err != nil {
			return 0, err
		}
		for _, p := range m.Parts {
			if p.Type != loom.PartTool {
				continue
			}
			err := recordIn(ctx, log, func(*SyncLog) (synclog.Payload, error) {
				return &synclog.PartUpdated{SessionID: m.SessionID, Seq: m.Seq, MessageID: m.ID, Part: p}, nil
			})
			if err != nil {
				return 0, err
			}
		}
	}
	return r.Parts, nil
}

// importIn is Store.Import of data, validated, inside tx, recorded in log
// (importRecords).
func importIn(ctx context.Context, tx ImportSteps, log *SyncLog, data []*loom.SessionData) error {
	if err := tx.ImportRows(ctx, data); err != nil {
		return err
	}
	return recordImport(ctx, log, data)
}

// recordImport records the import of data in log (importRecords).
func recordImport(ctx context.Context, log *SyncLog, data []*loom.SessionData) error {
	for _, d := range data {
		for _, p := range importRecords(d) {
			if err := recordIn(ctx, log, func(*SyncLog) (synclog.Payload, error) { return p, nil }); err != nil {
				return err
			}
		}
	}
	return nil
}

// rewriteBody stores m's parts as writeMessage says, and makes its
// session as recent as now (Written).
func rewriteBody(ctx context.Context, tx interface {
	SessionSteps
	BodySteps
}, m *loom.Message, now time.Time) error {
	b, err := tx.EncodeBody(m)
	if err != nil {
		return err
	}
	if err := writeMessage(ctx, tx, m.SessionID, m.Seq, b); err != nil {
		return fmt.Errorf("update message %d: %w", m.Seq, err)
	}
	return tx.Written(ctx, m.SessionID, now)
}

// SessionSteps are the reads and writes of session rows a write makes
// (Append, the updates, Delete's checks).
type SessionSteps interface {
	// Session returns session id with its lock, in the trash or not;
	// ENOTFOUND when there is none.
	Session(ctx context.Context, id string) (*loom.Session, error)
	// SessionForWrite returns session id as a write finds it, with its
	// lock, locking its row where the engine locks rows; nil when there
	// is none (trashed sessions included).
	SessionForWrite(ctx context.Context, id string) (*loom.Session, error)
	// SessionForUpdate returns session id, in the trash or not, its row
	// locked where the engine locks rows; ENOTFOUND when there is none.
	SessionForUpdate(ctx context.Context, id string) (*loom.Session, error)
	// CheckWriter fails with ELOCKED when another live process holds
	// the lock of session id, which need not exist yet.
	CheckWriter(ctx context.Context, id string) error
	// BeginUpdate makes the transaction the writer of session id: it
	// fails with ELOCKED when another live process holds the session's
	// lock, and, where the engine locks rows, holds the session's other
	// writers until it ends.
	BeginUpdate(ctx context.Context, id string) error
	// CreateSession inserts row, a session its first message creates
	// (loom.Session.Created). A row with the same id that appeared
	// meanwhile is left alone; a live session with the same key is
	// ECONFLICT.
	CreateSession(ctx context.Context, row *loom.Session) error
	// StoreAppend stores msgs, which cur.ApplyAppend numbered, where
	// session cur stores its own, and cur's counters, usage and times.
	StoreAppend(ctx context.Context, cur *loom.Session, msgs []*loom.Message) error
	// UpdateRow writes update u, validated, to the row of session id at
	// now (query.UpdateColumns): ECONFLICT when another session has the
	// key it sets.
	UpdateRow(ctx context.Context, id string, u loom.SessionUpdate, now time.Time) error
	// Written makes session id as recent as now, unless it is imported
	// (as recent as its source's messages: loom.Session.ApplyAppend).
	Written(ctx context.Context, id string, now time.Time) error
	// OwnUsage returns the id and usage of message seq of session id,
	// which must store it itself: ENOTFOUND otherwise.
	OwnUsage(ctx context.Context, id string, seq int64) (string, loom.Usage, error)
	// MoveUsage sets the usage of row seq of store, whose usage was old,
	// to u, and moves the totals of session id by the difference.
	MoveUsage(ctx context.Context, id, store string, seq int64, old, u loom.Usage) error
	// ProjectSessions returns the user's sessions of a project, the
	// live ones (archived included) newest first, then the trashed ones
	// newest first, their rows locked where the engine locks rows.
	ProjectSessions(ctx context.Context, userID, projectID string) ([]*loom.Session, error)
}

// PromptTx is a transaction that can change the last prompt sessions
// show: the engines' write transactions are.
type PromptTx interface {
	// ReplacePrompt sets to next the last prompt of every session whose
	// last prompt is old.
	ReplacePrompt(ctx context.Context, old, next string) error
}

// replacedPrompt keeps the sessions' last prompts in step with user
// message m, whose text was before until a part of it was replaced (a
// secret redacted): a session whose last prompt is that message's shows
// its text as it is now, so the old text is nowhere in the store.
func replacedPrompt(ctx context.Context, pt PromptTx, m *loom.Message, before string) error {
	if m.Role != loom.RoleUser {
		return nil
	}
	old, next := loom.Truncate(before, loom.MaxPrompt), loom.Truncate(m.Text(), loom.MaxPrompt)
	if old == next || old == "" {
		return nil
	}
	if err := pt.ReplacePrompt(ctx, old, next); err != nil {
		return fmt.Errorf("update last prompt: %w", err)
	}
	return nil
}
