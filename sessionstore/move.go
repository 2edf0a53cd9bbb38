package sessionstore

import (
	"context"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// MoveProject implements loom.ProjectMover with moveProject, in one
// write transaction of the engine.
func (s *Store) MoveProject(ctx context.Context, m loom.ProjectMove) ([]*loom.Session, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	var out []*loom.Session
	err := s.write(ctx, func(tx Tx, log *SyncLog) (err error) {
		out, err = moveProject(ctx, tx, log, m, s.eng.Now())
		return err
	})
	return out, err
}

// moveProject is loom.ProjectMover.MoveProject of m at now, inside tx,
// recorded in log: each moved session as updateSession records it
// (sessionChanged), in the order they are returned. The keys the new
// project's live sessions hold are read once, and a key is given to a
// moved session only where none of them has it, so no write of the
// move fails on a key clash the rule resolves (PostgreSQL ends a
// transaction at its first failed statement).
func moveProject(ctx context.Context, tx SessionSteps, log *SyncLog, m loom.ProjectMove, now time.Time) ([]*loom.Session, error) {
	sessions, err := tx.ProjectSessions(ctx, m.UserID, m.From)
	if err != nil || len(sessions) == 0 {
		return nil, err
	}
	there := sessions
	if m.To.ID != m.From {
		if there, err = tx.ProjectSessions(ctx, m.UserID, m.To.ID); err != nil {
			return nil, err
		}
	}
	keys := liveKeys(there)
	updates := make([]loom.SessionUpdate, len(sessions))
	for i, s := range sessions {
		u := loom.SessionUpdate{Project: &m.To, Cwd: m.Cwd, KeepUpdatedAt: m.KeepUpdatedAt}
		if key := keys.claim(s, m); key != s.Key {
			u.Key = &key
		}
		if err := u.Validate(); err != nil {
			return nil, fmt.Errorf("move %s: %w", s.ID, err)
		}
		if err := tx.UpdateRow(ctx, s.ID, u, now); err != nil {
			return nil, fmt.Errorf("move %s: %w", s.ID, err)
		}
		updates[i] = u
	}
	after, err := tx.ProjectSessions(ctx, m.UserID, m.To.ID)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*loom.Session, len(after))
	for _, s := range after {
		byID[s.ID] = s
	}
	out := make([]*loom.Session, len(sessions))
	for i, s := range sessions {
		if out[i] = byID[s.ID]; out[i] == nil {
			return nil, fmt.Errorf("move %s: not found in project %s after the move", s.ID, m.To.ID)
		}
		err := recordIn(ctx, log, func(*SyncLog) (synclog.Payload, error) { return sessionChanged(out[i], updates[i]), nil })
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// movedKeys are the keys of a project's live sessions, each with the id
// of the session that holds it, as a move gives them out.
type movedKeys map[string]string

func liveKeys(sessions []*loom.Session) movedKeys {
	k := movedKeys{}
	for _, s := range sessions {
		if s.Key != "" && s.DeletedAt == nil {
			k[s.Key] = s.ID
		}
	}
	return k
}

// claim returns the key session s has in the project m moves it to: its
// key, renamed after the new project where it was made from the old
// one's name (loom.MovedKey). A live session's command-line key that
// another live session there has already becomes CLIKeyAt of the new
// name at m.At (s's creation time when zero), counting on by a
// millisecond until one is free. The trash holds keys no live session
// is kept from: a trashed session keeps the key it would have.
func (k movedKeys) claim(s *loom.Session, m loom.ProjectMove) string {
	key := s.Key
	if renamed, ok := loom.MovedKey(s.Key, s.Project.Name, m.To.Name); ok {
		key = renamed
	}
	if key == "" || s.DeletedAt != nil {
		return key
	}
	at := m.At
	if at.IsZero() {
		at = s.CreatedAt
	}
	for loom.IsCLIKey(s.Key) && k.other(key, s.ID) {
		key = loom.CLIKeyAt(m.To.Name, at)
		at = at.Add(time.Millisecond)
	}
	if k[s.Key] == s.ID {
		delete(k, s.Key)
	}
	k[key] = s.ID
	return key
}

// other reports whether a session other than id holds key.
func (k movedKeys) other(key, id string) bool {
	holder, ok := k[key]
	return ok && holder != id
}
