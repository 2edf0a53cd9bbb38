package sqlstore

import (
	"context"
	"time"

	"github.com/loomhq/loom"
)

// ImportTx is a write transaction that also sets a part, a usage and a
// title as the store's UpdatePart, UpdateUsage and UpdateSession do:
// what applying a loom.ImportWrite takes.
type ImportTx interface {
	Tx
	SetPart(ctx context.Context, sessionID string, seq int64, p loom.Part) error
	SetUsage(ctx context.Context, sessionID string, seq int64, u loom.Usage) error
	SetTitle(ctx context.Context, sessionID, title string) error
}

// ApplyChanges applies changes in order inside tx, appending as owner at
// now, and returns the sessions appended to as they are after it, by
// the changes' index, to give their callers once tx commits (Refresh).
func ApplyChanges(ctx context.Context, tx ImportTx, changes []loom.ImportChange, owner string, now time.Time) ([]*loom.Session, error) {
	fresh := make([]*loom.Session, len(changes))
	for i, c := range changes {
		var err error
		switch {
		case c.Session != nil:
			fresh[i], err = Append(ctx, tx, c.Session, c.Messages, owner, now)
		case c.Part != nil:
			err = tx.SetPart(ctx, c.SessionID, c.Seq, *c.Part)
		case c.Usage != nil:
			err = tx.SetUsage(ctx, c.SessionID, c.Seq, *c.Usage)
		case c.Title != nil:
			err = tx.SetTitle(ctx, c.SessionID, *c.Title)
		}
		if err != nil {
			return nil, err
		}
	}
	return fresh, nil
}

// Refresh gives the sessions of changes that were appended to what
// ApplyChanges returned for them.
func Refresh(changes []loom.ImportChange, fresh []*loom.Session) {
	for i, c := range changes {
		if i < len(fresh) && fresh[i] != nil {
			*c.Session = *fresh[i]
		}
	}
}
