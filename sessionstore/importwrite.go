package sessionstore

import (
	"context"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// ImportSteps are the writes of an import beside its sessions' records.
type ImportSteps interface {
	// ImportRows writes data, validated, as its sessions and messages.
	ImportRows(ctx context.Context, data []*loom.SessionData) error
	// RecordFiles keeps files, validated, as the records of the files an
	// import read.
	RecordFiles(ctx context.Context, files []loom.ImportedFile) error
	// RecordCalls keeps which session counts each of calls, validated;
	// a call counted already keeps its session.
	RecordCalls(ctx context.Context, calls []loom.CountedCall) error
	// KeepOriginals keeps the chunks of the files an import read
	// (loom.OriginalsKeeper), validated; one that does not follow what
	// is kept of its file is EINVALID when strict, else left out.
	KeepOriginals(ctx context.Context, chunks []loom.OriginalChunk, strict bool) error
}

// applyChanges applies changes in order inside tx, recorded in log, as
// Append, UpdatePart, UpdateUsage and UpdateSession do (and settles
// times: settleTimes), appending as
// owner at now, and returns the sessions appended to as they are after it, by
// the changes' index, to give their callers once tx commits (refresh).
func applyChanges(ctx context.Context, tx Tx, log *SyncLog, changes []loom.ImportChange, owner string, now time.Time) ([]*loom.Session, error) {
	fresh := make([]*loom.Session, len(changes))
	for i, c := range changes {
		var err error
		switch {
		case c.Session != nil:
			fresh[i], err = appendIn(ctx, tx, log, c.Session, c.Messages, owner, now)
		case c.Part != nil:
			err = updatePart(ctx, tx, log, c.SessionID, c.Seq, *c.Part, now)
		case c.Usage != nil:
			err = updateUsage(ctx, tx, log, c.SessionID, c.Seq, *c.Usage)
		case c.Title != nil:
			_, err = updateSession(ctx, tx, log, c.SessionID, loom.SessionUpdate{Title: c.Title}, now)
		case c.Model != nil:
			_, err = updateSession(ctx, tx, log, c.SessionID, c.ModelUpdate(), now)
		case c.Settled != nil:
			err = settleTimes(ctx, tx, log, c.SessionID, c.Seq, *c.Settled)
		}
		if err != nil {
			return nil, err
		}
	}
	return fresh, nil
}

// refresh gives the sessions of changes that were appended to what
// applyChanges returned for them.
func refresh(changes []loom.ImportChange, fresh []*loom.Session) {
	for i, c := range changes {
		if i < len(fresh) && fresh[i] != nil {
			*c.Session = *fresh[i]
		}
	}
}

// keepOriginals keeps chunks inside tx, each recorded in log for the
// other machines (synclog.OriginalKept; a chunk of a file of several
// sessions names none, and is not).
func keepOriginals(ctx context.Context, tx Tx, log *SyncLog, chunks []loom.OriginalChunk, strict bool) error {
	if len(chunks) == 0 {
		return nil
	}
	if err := tx.KeepOriginals(ctx, chunks, strict); err != nil {
		return err
	}
	for _, c := range chunks {
		err := recordIn(ctx, log, func(*SyncLog) (synclog.Payload, error) {
			if p := synclog.OriginalRecord(c); p != nil {
				return p, nil
			}
			return nil, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// KeepOriginal implements loom.OriginalsKeeper: one chunk, in a
// transaction of its own, recorded for sync as in an import.
func (s *Store) KeepOriginal(ctx context.Context, c loom.OriginalChunk) error {
	if err := c.Validate(); err != nil {
		return err
	}
	chunks := []loom.OriginalChunk{c}
	if err := s.redactOriginals(chunks); err != nil {
		return err
	}
	return s.write(ctx, func(tx Tx, log *SyncLog) error {
		return keepOriginals(ctx, tx, log, chunks, true)
	})
}

// applyOriginal keeps the chunk p records for the user of its session
// here; a chunk of a session this store does not hold is dropped.
func applyOriginal(ctx context.Context, tx Tx, p *synclog.OriginalKept) error {
	k, ok, err := tx.KeyOf(ctx, p.SessionID)
	if err != nil || !ok {
		return err
	}
	return tx.KeepOriginals(ctx, []loom.OriginalChunk{p.Chunk(k.User)}, false)
}
