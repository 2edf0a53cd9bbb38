package loom

import (
	"context"
	"time"
)

// ImportWrite is what an import of other agents' sessions read from a
// batch of source files: the sessions new to the store, the changes to
// sessions imported before, and the records of the files they came
// from, which ImportApplier writes in one transaction, so that a file
// is recorded as read exactly when what it held is stored.
type ImportWrite struct {
	// Sessions are new sessions, written whole as Import writes them.
	Sessions []*SessionData
	// Changes are applied after them, in order.
	Changes []ImportChange
	// Files are recorded last, as RecordImportedFiles records them.
	Files []ImportedFile
	// Calls are the model calls the sessions count, recorded with the
	// files (by a store that is a CallCounter; others leave them out).
	Calls []CountedCall
	// Originals are the bytes of the files read that the store does not
	// keep yet, kept before the files are recorded (by a store that is
	// an OriginalsKeeper; others leave them out). A chunk that no longer
	// follows what is kept of its file (another import kept it first)
	// is left out: the file's next change brings what is missing.
	Originals []OriginalChunk
}

// CountedCall names the session that counts a model call: an agent can
// write one call into several files (a session resumed into a new file,
// a file renamed), and the call's usage is counted in the session that
// was imported first, as ccusage counts it once.
type CountedCall struct {
	UserID string
	// Call is the agent's id of the call, prefixed with the agent's
	// name (Message.Call).
	Call      string
	SessionID string
}

// MaxCallID bounds a call's id.
const MaxCallID = 512

// Validate checks a record before it is kept.
func (c CountedCall) Validate() error {
	if c.UserID == "" || c.Call == "" || c.SessionID == "" {
		return Errorf(EINVALID, "a counted call needs its user, call and session")
	}
	if len(c.Call) > MaxCallID {
		return Errorf(EINVALID, "a call id of %d bytes is longer than %d", len(c.Call), MaxCallID)
	}
	return nil
}

// CallCounter is a Store that keeps which session counts each model call
// an import read (ImportWrite.Calls). Both SQL engines are.
type CallCounter interface {
	// CountingSessions returns, of calls, those a session of userID
	// counts, each with that session's id.
	CountingSessions(ctx context.Context, userID string, calls []string) (map[string]string, error)
}

// ImportChange is one change to a session imported before: Messages
// appended to Session (as Append), or Part or Usage set on message Seq
// of session SessionID (as UpdatePart, UpdateUsage), or its Title set
// (as UpdateSession), or its Model set (as UpdateSession with
// KeepUpdatedAt: a reply that names the model of a session first read
// before it is not activity of its own), or its times settled
// (Settled). One of Messages, Part, Usage, Title, Model and Settled is
// set.
type ImportChange struct {
	Session   *Session
	Messages  []*Message
	SessionID string
	Seq       int64
	Part      *Part
	Usage     *Usage
	Title     *string
	Model     *string
	Settled   *SettledTimes
}

// SettledTimes are the times a reading of a whole source file gives a
// session imported before, where a reading of less of it (a capture
// made while its agent was writing) gave earlier ones: CompletedAt,
// when message Seq of the change completed (its last line, a tool's
// result, read since), and UpdatedAt, when the session was last active.
// Either may be nil. A time settles forward only: a store keeps the
// later of the one it holds and the one given, so that a reading of
// less of the file, or a change made in loom since, is never undone.
type SettledTimes struct {
	CompletedAt *time.Time
	UpdatedAt   *time.Time
}

// ModelUpdate is the session update of change c that sets its Model.
func (c ImportChange) ModelUpdate() SessionUpdate {
	return SessionUpdate{Model: c.Model, KeepUpdatedAt: true}
}

// ImportApplier writes an ImportWrite in one transaction: all of it,
// or, on an error or a crash, none of it. Every engine is one (Engine),
// and so is the store in memory of sessionstore's rules' tests.
type ImportApplier interface {
	ApplyImport(ctx context.Context, w *ImportWrite) error
}

// Empty reports whether w writes nothing.
func (w *ImportWrite) Empty() bool {
	return len(w.Sessions) == 0 && len(w.Changes) == 0 && len(w.Files) == 0 && len(w.Calls) == 0 && len(w.Originals) == 0
}

// Validate checks w before anything of it is written.
func (w *ImportWrite) Validate() error {
	if err := ValidateImport(w.Sessions); err != nil {
		return err
	}
	for _, c := range w.Changes {
		switch {
		case c.Session != nil:
			if c.Session.ID == "" {
				return Errorf(EINVALID, "an imported session's change needs its id")
			}
			for _, m := range c.Messages {
				if err := m.Validate(); err != nil {
					return err
				}
			}
		case c.Part != nil:
			if err := c.Part.Validate(); err != nil {
				return err
			}
		case c.Usage != nil:
		case c.Title != nil:
			if err := (SessionUpdate{Title: c.Title}).Validate(); err != nil {
				return err
			}
		case c.Model != nil:
			if err := c.ModelUpdate().Validate(); err != nil {
				return err
			}
		case c.Settled != nil:
			if c.SessionID == "" || (c.Settled.CompletedAt != nil && c.Seq < 1) {
				return Errorf(EINVALID, "settled times need their session, and a completion its message")
			}
			if c.Settled.CompletedAt == nil && c.Settled.UpdatedAt == nil {
				return Errorf(EINVALID, "an imported session's change changes nothing")
			}
		default:
			return Errorf(EINVALID, "an imported session's change changes nothing")
		}
	}
	for i := range w.Files {
		if err := w.Files[i].Validate(); err != nil {
			return err
		}
	}
	for _, c := range w.Calls {
		if err := c.Validate(); err != nil {
			return err
		}
	}
	for i := range w.Originals {
		if err := w.Originals[i].Validate(); err != nil {
			return err
		}
	}
	return nil
}
