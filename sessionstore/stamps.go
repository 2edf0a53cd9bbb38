package sessionstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// StampSteps keep the stamps of messages and parts, and the state sync
// keeps of a session beside its row (Meta, Life), which the merge rules
// compare a change with.
type StampSteps interface {
	// MessageStamp returns the stamp of the append of message id, or of
	// its latest usage update with usage; zero when none is kept.
	MessageStamp(ctx context.Context, id string, usage bool) (synclog.Stamp, error)
	// PartStamp returns the stamp of the latest update of part pid of
	// message mid; ok is false when none is kept.
	PartStamp(ctx context.Context, mid, pid string) (st synclog.Stamp, ok bool, err error)
	// StampMessage keeps st as the stamp of the append of message id,
	// unless it has one.
	StampMessage(ctx context.Context, id string, st synclog.Stamp) error
	// StampPart keeps st as the stamp of part pid of message mid.
	StampPart(ctx context.Context, mid, pid string, st synclog.Stamp) error
	// StampUsage keeps st as the stamp of the usage of message mid.
	StampUsage(ctx context.Context, mid string, st synclog.Stamp) error
	// LoadState returns the JSON of state kind of session id, "" when
	// none is kept; SaveState replaces it; States returns it for every
	// session that has one.
	LoadState(ctx context.Context, kind State, id string) (string, error)
	SaveState(ctx context.Context, kind State, id, value string) error
	States(ctx context.Context, kind State) ([]StateRow, error)
}

// localIn keeps what the merge rules need of a change this store made, p,
// recorded at st as record idx of its log: the same stamps and trash
// state applying it elsewhere keeps, so that a change of another host
// older than this one does not overwrite it.
func localIn(ctx context.Context, tx Tx, st synclog.Stamp, idx int64, p synclog.Payload) error {
	if err := lived(ctx, tx, st.Host, idx, p); err != nil {
		return err
	}
	switch p := p.(type) {
	case *synclog.Trashed:
		return eachLocalLife(ctx, tx, p.SessionIDs, func(l *Life) { l.Trashed(st, p) })
	case *synclog.Restored:
		return eachLocalLife(ctx, tx, p.SessionIDs, func(l *Life) { l.Restored(st) })
	case *synclog.Purged:
		return markPurged(ctx, tx, p.SessionIDs)
	case *synclog.SessionCreated:
		return saveMeta(ctx, tx, p.Session.ID, newMeta(p.Session, st))
	case *synclog.MessagesAppended:
		if err := stampMessages(ctx, tx, st, p.Messages); err != nil {
			return err
		}
		return appendUnarchives(ctx, tx, p.SessionID, st)
	case *synclog.Imported:
		return stampImported(ctx, tx, st, p.Sessions)
	case *synclog.SessionChanged:
		return localChange(ctx, tx, st, p)
	case *synclog.PartUpdated:
		// As recent as the update's stamp, as where it is applied.
		if err := tx.Touch(ctx, p.SessionID, st.HLC.Wall()); err != nil {
			return err
		}
		return tx.StampPart(ctx, p.MessageID, p.Part.ID, st)
	case *synclog.UsageUpdated:
		return tx.StampUsage(ctx, p.MessageID, st)
	case *synclog.Forked:
		if err := tx.SaveFork(ctx, p.Session.ID, p.Session.ParentID, p.LastSeq, plainFork); err != nil {
			return err
		}
		return saveMeta(ctx, tx, p.Session.ID, newMeta(p.Session, st))
	case *synclog.Rewound:
		// Forks made from the part that moved follow it, as on the
		// hosts that apply the rewind.
		if err := tx.MoveForks(ctx, p.SessionID, p.Fork.ID, p.KeepSeq+1); err != nil {
			return err
		}
		if err := tx.SaveFork(ctx, p.Fork.ID, p.SessionID, p.KeepSeq, rewindFork); err != nil {
			return err
		}
		return saveMeta(ctx, tx, p.Fork.ID, newMeta(p.Fork, st))
	}
	return nil
}

// localChange keeps the stamps of metadata change p this store made,
// passes it to the session's conflict forks, and gives a key it let go
// to the next claim on it.
func localChange(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.SessionChanged) error {
	m, err := loadMeta(ctx, tx, p.SessionID)
	if err != nil {
		return err
	}
	before := m
	m.Apply(st, p, 0)
	if err := saveMeta(ctx, tx, p.SessionID, m); err != nil {
		return err
	}
	if err := changeConflictForks(ctx, tx, p.SessionID, st, p, 1); err != nil {
		return err
	}
	if (p.Key != nil || p.Project != nil) && !before.Key.Stamp.IsZero() {
		k, ok, err := tx.KeyOf(ctx, p.SessionID)
		switch {
		case err != nil:
			return fmt.Errorf("read session %s: %w", p.SessionID, err)
		case !ok:
			return fmt.Errorf("read session %s: it is not here", p.SessionID)
		}
		return settleKey(ctx, tx, KeyScope{k.User, before.Project.Value.ID, before.Key.Value})
	}
	return nil
}

// stampImported keeps the stamps of imported sessions and their
// messages.
func stampImported(ctx context.Context, tx StampSteps, st synclog.Stamp, data []*loom.SessionData) error {
	for _, d := range data {
		if err := saveMeta(ctx, tx, d.Session.ID, newMeta(d.Session, st)); err != nil {
			return err
		}
		if err := stampMessages(ctx, tx, st, d.Messages); err != nil {
			return err
		}
	}
	return nil
}

// stampMessages keeps the stamp of the record that appended msgs.
func stampMessages(ctx context.Context, tx StampSteps, st synclog.Stamp, msgs []*loom.Message) error {
	for _, m := range msgs {
		if err := tx.StampMessage(ctx, m.ID, st); err != nil {
			return fmt.Errorf("stamp message %s: %w", m.ID, err)
		}
	}
	return nil
}

// loadMeta returns the merged metadata of session id; none when the
// session's fields were never stamped (it was made before sync was set
// up, and has not changed since).
func loadMeta(ctx context.Context, tx StampSteps, id string) (Meta, error) {
	return loadState[Meta](ctx, tx, metaState, id)
}

// saveMeta stores m as the merged metadata of session id.
func saveMeta(ctx context.Context, tx StampSteps, id string, m Meta) error {
	return saveState(ctx, tx, metaState, id, m)
}

// what names state kind in errors.
func (kind State) what() string {
	switch kind {
	case LifeState:
		return "trash state"
	case PurgeKeptState:
		return "purged session kept"
	}
	return "stamps"
}

// loadState returns state kind of session id, the zero value when none
// is kept.
func loadState[T any](ctx context.Context, tx StampSteps, kind State, id string) (T, error) {
	var v T
	text, err := tx.LoadState(ctx, kind, id)
	if err != nil {
		return v, fmt.Errorf("read %s of %s: %w", kind.what(), id, err)
	}
	if text == "" {
		return v, nil
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return v, fmt.Errorf("read %s of %s: %w", kind.what(), id, err)
	}
	return v, nil
}

// saveState stores v as state kind of session id.
func saveState(ctx context.Context, tx StampSteps, kind State, id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("write %s of %s: %w", kind.what(), id, err)
	}
	if err := tx.SaveState(ctx, kind, id, string(b)); err != nil {
		return fmt.Errorf("write %s of %s: %w", kind.what(), id, err)
	}
	return nil
}
