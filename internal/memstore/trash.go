package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/loomhq/loom"
)

// Family implements sessionstore.TrashSteps.
func (t *tx) Family(ctx context.Context, id string, trashed bool) ([]*loom.Session, error) {
	var out []*loom.Session
	for _, fid := range t.st.family(id) {
		x, ok := t.st.sessions[fid]
		if ok && (trashed || live(x)) {
			out = append(out, t.s.session(t.st, x))
		}
	}
	return out, nil
}

// Prunable implements sessionstore.TrashSteps: live sessions, neither archived
// nor sub-agents', of the user and project, not updated since
// now-opts.OlderThan, oldest first.
func (t *tx) Prunable(ctx context.Context, opts loom.PruneOptions, now time.Time) ([]*loom.Session, error) {
	bound := stored(loom.ClampTime(now.Add(-opts.OlderThan)))
	var out []*loom.Session
	for _, x := range t.st.sessions {
		if !live(x) || x.ArchivedAt != nil || x.Kind == loom.KindSubagent || x.UpdatedAt.After(bound) ||
			opts.UserID != "" && x.UserID != opts.UserID || opts.ProjectID != "" && x.Project.ID != opts.ProjectID {
			continue
		}
		out = append(out, t.s.session(t.st, x))
	}
	oldestFirst(out, func(x *loom.Session) time.Time { return x.UpdatedAt })
	return out, nil
}

// EmptyTrash implements sessionstore.TrashSteps.
func (t *tx) EmptyTrash(ctx context.Context, before time.Time) ([]string, error) {
	bound := stored(before)
	var out []string
	for id, x := range t.st.sessions {
		if x.DeletedAt != nil && x.DeletedAt.Before(bound) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	for _, id := range out {
		t.st.deleteSession(id)
	}
	return out, nil
}

// Purge implements sessionstore.TrashSteps.
func (t *tx) Purge(ctx context.Context, id string) error {
	for _, fid := range t.st.family(id) {
		t.st.deleteSession(fid)
	}
	return nil
}

// Trash implements sessionstore.TrashSteps.
func (t *tx) Trash(ctx context.Context, ids []string, at time.Time) ([]string, error) {
	var out []string
	for _, id := range ids {
		for _, fid := range t.st.family(id) {
			x, ok := t.st.sessions[fid]
			if !ok || !live(x) {
				continue
			}
			x.DeletedAt = &at
			if err := t.st.put(x); err != nil {
				return nil, err
			}
			out = append(out, fid)
		}
	}
	return out, nil
}

// Untrash implements sessionstore.TrashSteps: none is restored when a key
// another live session took meanwhile stops one.
func (t *tx) Untrash(ctx context.Context, id string, at time.Time) ([]string, bool, error) {
	var back []loom.Session
	for _, fid := range t.st.family(id) {
		x, ok := t.st.sessions[fid]
		if ok && sameTime(x.DeletedAt, &at) {
			x.DeletedAt = nil
			back = append(back, x)
		}
	}
	var out []string
	for _, x := range back {
		// A key taken fails the restore, and the transaction, which
		// puts back what it changed.
		if err := t.st.put(x); err != nil {
			return nil, true, err
		}
		out = append(out, x.ID)
	}
	return out, false, nil
}
