package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// stampImported keeps the stamps of imported sessions and their
// messages.
func stampImported(ctx context.Context, w writes, st synclog.Stamp, data []*loom.SessionData) error {
	for _, d := range data {
		if err := saveMeta(ctx, w, d.Session.ID, synclog.NewMeta(d.Session, st)); err != nil {
			return err
		}
		if err := stampMessages(ctx, w, st, d.Messages); err != nil {
			return err
		}
	}
	return nil
}

// stampLocal keeps what the merge rules need of a change this store
// made, p, recorded at st as record idx of its log: the same stamps and
// trash state applying it elsewhere keeps, so that a change of another
// host older than this one does not overwrite it.
func stampLocal(ctx context.Context, w writes, st synclog.Stamp, idx uint64, p synclog.Payload) error {
	if id := workedIn(p); id != "" {
		if err := worked(ctx, w, id, st.Host, idx); err != nil {
			return err
		}
	}
	switch p := p.(type) {
	case *synclog.Trashed:
		return eachLocalLife(ctx, w, p.SessionIDs, func(l *synclog.Life) { l.Trashed(st, p) })
	case *synclog.Restored:
		return eachLocalLife(ctx, w, p.SessionIDs, func(l *synclog.Life) { l.Restored(st) })
	case *synclog.Purged:
		return markPurged(ctx, w, p.SessionIDs)
	case *synclog.SessionCreated:
		return saveMeta(ctx, w, p.Session.ID, synclog.NewMeta(p.Session, st))
	case *synclog.MessagesAppended:
		if err := stampMessages(ctx, w, st, p.Messages); err != nil {
			return err
		}
		return appendUnarchives(ctx, w, p.SessionID, st)
	case *synclog.Imported:
		return stampImported(ctx, w, st, p.Sessions)
	case *synclog.SessionChanged:
		m, err := loadMeta(ctx, w, p.SessionID)
		if err != nil {
			return err
		}
		before := m
		m.Apply(st, p, 0)
		if err := saveMeta(ctx, w, p.SessionID, m); err != nil {
			return err
		}
		if err := changeConflictForks(ctx, w, p.SessionID, st, p, 1); err != nil {
			return err
		}
		// A key let go here goes to the next claim on it.
		if (p.Key != nil || p.Project != nil) && !before.Key.Stamp.IsZero() {
			var user string
			if err := w.QueryRowContext(ctx, `SELECT user_id FROM sessions WHERE id = ?`, p.SessionID).Scan(&user); err != nil {
				return fmt.Errorf("read session %s: %w", p.SessionID, err)
			}
			return settleKey(ctx, w, keyScope{user, before.Project.Value.ID, before.Key.Value})
		}
		return nil
	case *synclog.PartUpdated:
		// As recent as the update's stamp, as where it is applied.
		if err := touch(ctx, w, p.SessionID, st.HLC.Wall()); err != nil {
			return err
		}
		return stampPart(ctx, w, st, p.MessageID, p.Part.ID)
	case *synclog.UsageUpdated:
		return stampUsage(ctx, w, st, p.MessageID)
	case *synclog.Forked:
		if err := saveFork(ctx, w, p.Session.ID, p.Session.ParentID, p.LastSeq, forkPlain); err != nil {
			return err
		}
		return saveMeta(ctx, w, p.Session.ID, synclog.NewMeta(p.Session, st))
	case *synclog.Rewound:
		if err := saveFork(ctx, w, p.Fork.ID, p.SessionID, p.KeepSeq, forkRewind); err != nil {
			return err
		}
		return saveMeta(ctx, w, p.Fork.ID, synclog.NewMeta(p.Fork, st))
	}
	return nil
}

// stampMessages keeps the stamp of the record that appended msgs.
func stampMessages(ctx context.Context, w writes, st synclog.Stamp, msgs []*loom.Message) error {
	for _, m := range msgs {
		if _, err := w.ExecContext(ctx, `INSERT INTO sync_messages (id, hlc, host) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			m.ID, st.HLC, string(st.Host)); err != nil {
			return fmt.Errorf("stamp message %s: %w", m.ID, err)
		}
	}
	return nil
}

// loadMeta returns the merged metadata of session id; none when the
// session's fields were never stamped (it was made before sync was set
// up, and has not changed since).
func loadMeta(ctx context.Context, w writes, id string) (synclog.Meta, error) {
	return loadState[synclog.Meta](ctx, w, metaState, id)
}

// saveMeta stores m as the merged metadata of session id.
func saveMeta(ctx context.Context, w writes, id string, m synclog.Meta) error {
	return saveState(ctx, w, metaState, id, m)
}

// sessionState is what sync keeps of each session beside its row, as
// JSON in column col of table, keyed by session_id; what names it in
// errors.
type sessionState struct{ table, col, what string }

var (
	metaState = sessionState{"sync_meta", "meta", "stamps"}
	lifeState = sessionState{"sync_life", "life", "trash state"}
)

// loadState returns st of session id, the zero value when none is kept.
func loadState[T any](ctx context.Context, w writes, st sessionState, id string) (T, error) {
	var v T
	var text string
	err := w.QueryRowContext(ctx, `SELECT `+st.col+` FROM `+st.table+` WHERE session_id = ?`, id).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return v, nil
	}
	if err != nil {
		return v, fmt.Errorf("read %s of %s: %w", st.what, id, err)
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return v, fmt.Errorf("read %s of %s: %w", st.what, id, err)
	}
	return v, nil
}

// saveState stores v as st of session id.
func saveState(ctx context.Context, w writes, st sessionState, id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("write %s of %s: %w", st.what, id, err)
	}
	if _, err := w.ExecContext(ctx, `INSERT INTO `+st.table+` (session_id, `+st.col+`) VALUES (?, ?)
		ON CONFLICT (session_id) DO UPDATE SET `+st.col+` = excluded.`+st.col, id, string(b)); err != nil {
		return fmt.Errorf("write %s of %s: %w", st.what, id, err)
	}
	return nil
}

// messageStamp returns the stamp of the append of message id, or of its
// latest usage update with usage; zero for a message stored before sync
// was set up.
func messageStamp(ctx context.Context, w writes, id string, usage bool) (synclog.Stamp, error) {
	var st synclog.Stamp
	var uh sql.NullInt64
	var uhost sql.NullString
	err := w.QueryRowContext(ctx, `SELECT hlc, host, usage_hlc, usage_host FROM sync_messages WHERE id = ?`, id).Scan(
		&st.HLC, &st.Host, &uh, &uhost)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read stamp of message %s: %w", id, err)
	}
	if usage && uh.Valid {
		st = synclog.Stamp{HLC: synclog.HLC(uh.Int64), Host: synclog.HostID(uhost.String)}
	}
	return st, nil
}

// stampPart keeps the stamp of the latest update of part pid of message
// mid.
func stampPart(ctx context.Context, w writes, st synclog.Stamp, mid, pid string) error {
	if _, err := w.ExecContext(ctx, `INSERT INTO sync_parts (message_id, part_id, hlc, host) VALUES (?, ?, ?, ?)
		ON CONFLICT (message_id, part_id) DO UPDATE SET hlc = excluded.hlc, host = excluded.host`,
		mid, pid, st.HLC, string(st.Host)); err != nil {
		return fmt.Errorf("stamp part %s: %w", pid, err)
	}
	return nil
}

// stampUsage keeps the stamp of the latest usage update of message mid.
func stampUsage(ctx context.Context, w writes, st synclog.Stamp, mid string) error {
	if _, err := w.ExecContext(ctx, `INSERT INTO sync_messages (id, hlc, host, usage_hlc, usage_host) VALUES (?1, 0, '', ?2, ?3)
		ON CONFLICT (id) DO UPDATE SET usage_hlc = ?2, usage_host = ?3`, mid, st.HLC, string(st.Host)); err != nil {
		return fmt.Errorf("stamp usage of %s: %w", mid, err)
	}
	return nil
}
