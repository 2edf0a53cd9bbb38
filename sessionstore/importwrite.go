package sessionstore

import (
	"context"
	"time"

	"github.com/loomhq/loom"
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
	// is kept of its file is left out.
	KeepOriginals(ctx context.Context, chunks []loom.OriginalChunk) error
}

// applyChanges applies changes in order inside tx, recorded in log, as
// Append, UpdatePart, UpdateUsage and UpdateSession do, appending as
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
