package sessionstore

import (
	"context"
	"fmt"
	"slices"

	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/synclog"
)

// MergeSteps are the reads and writes of session rows the merge rules
// make where another host's change lands.
type MergeSteps interface {
	// Messages returns messages from to to of session id, as it reads
	// them.
	Messages(ctx context.Context, id string, from, to int64) ([]*loom.Message, error)
	// MessageID returns the id of message seq of session id as the
	// session reads it, "" when it has none.
	MessageID(ctx context.Context, id string, seq int64) (string, error)
	// StoreOf returns the store that holds row seq of session id.
	StoreOf(ctx context.Context, id string, seq int64) (string, error)
	// Touch makes session id as recent as at, unless it is more recent
	// or imported.
	Touch(ctx context.Context, id string, at time.Time) error
	// SetColumns writes c into the row of session id.
	SetColumns(ctx context.Context, id string, c Columns) error
	// SetWriterRow gives session row.ID the metadata and times of row.
	SetWriterRow(ctx context.Context, row *loom.Session) error
	// SetConflictRow gives conflict fork id of parent its times, created,
	// no key, and parent's archived state.
	SetConflictRow(ctx context.Context, parent, id string, created time.Time) error
	// SetDeleted puts session id in the trash at at, or out of it with
	// nil (and then without its key), and reports whether it changed.
	SetDeleted(ctx context.Context, id string, at *time.Time) (bool, error)
	// DeleteRow removes the row of session id (its messages unless a
	// fork reads them).
	DeleteRow(ctx context.Context, id string) error
}

// applyChanged merges metadata change p into its session, field by field:
// each field keeps the write with the greatest stamp (Meta), and
// the session's updated_at the greatest time of the changes it holds.
// The session's conflict forks take the change too, as their parent's.
func applyChanged(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.SessionChanged) error {
	cur, err := tx.SessionForWrite(ctx, p.SessionID)
	if err != nil {
		return err
	}
	if cur == nil {
		return fmt.Errorf("%w: a change of session %s, which this store does not hold", ErrWaits, p.SessionID)
	}
	if changesToMarkers(p) {
		// A redaction's: the title it replaces must not stay
		// readable in the store's files.
		if err := tx.Replaced(ctx); err != nil {
			return err
		}
	}
	return mergeChange(ctx, tx, cur.ID, st, p, 0)
}

// mergeChange merges change p, stamped st, into session id, depth
// conflict-fork generations below the session p changed, writing the
// fields it wins into the row, and then into id's conflict forks, one
// generation farther.
func mergeChange(ctx context.Context, tx Tx, id string, st synclog.Stamp, p *synclog.SessionChanged, depth int) error {
	m, err := loadMeta(ctx, tx, id)
	if err != nil {
		return err
	}
	before := m
	m.Apply(st, p, depth)
	var c Columns
	took := func(a, b synclog.Stamp) bool { return a != b }
	switch {
	case !took(before.Title.Stamp, m.Title.Stamp):
	case m.Title.Depth == 0:
		c.Title = &m.Title.Value
	case m.Title.Value != "":
		// A conflict fork shows its parent's title as a conflict copy's;
		// an empty one, which a title made from the first prompt takes,
		// leaves the fork's as it is.
		t := conflictTitle(m.Title.Value)
		c.Title = &t
	}
	for _, f := range []struct {
		col           **string
		before, after *Field[string]
	}{{&c.Description, &before.Description, &m.Description},
		{&c.Cwd, &before.Cwd, &m.Cwd}, {&c.Model, &before.Model, &m.Model}, {&c.Provider, &before.Provider, &m.Provider},
		{&c.Profile, &before.Profile, &m.Profile}, {&c.GitBranch, &before.GitBranch, &m.GitBranch}} {
		if took(f.before.Stamp, f.after.Stamp) {
			*f.col = &f.after.Value
		}
	}
	// A new key or project changes which sessions claim a key: the
	// session lets its key go here, and settleKey gives the old one and
	// the new one to the earliest claims.
	var old KeyScope
	rekey := took(before.Key.Stamp, m.Key.Stamp) || took(before.Project.Stamp, m.Project.Stamp)
	if rekey {
		if old, err = scopeOf(ctx, tx, id); err != nil {
			return err
		}
		c.ClearKey = true
		if m.Key.Value != "" {
			s := loom.SurfaceOf(m.Key.Value)
			c.Surface = &s
		}
	}
	if took(before.Project.Stamp, m.Project.Stamp) {
		c.Project = &m.Project.Value
	}
	if took(before.Archived.Stamp, m.Archived.Stamp) {
		c.Archive, c.Archived = true, m.Archived.Value
	}
	if p.At != nil && depth == 0 {
		c.UpdatedAt = p.At
	}
	if err := tx.SetColumns(ctx, id, c); err != nil {
		return fmt.Errorf("update session %s: %w", id, err)
	}
	if err := saveMeta(ctx, tx, id, m); err != nil {
		return err
	}
	if rekey {
		now, err := scopeOf(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := settleKey(ctx, tx, now); err != nil {
			return err
		}
		if err := settleKey(ctx, tx, old); err != nil {
			return err
		}
	}
	return changeConflictForks(ctx, tx, id, st, p, depth+1)
}

// changeConflictForks merges change p, stamped st, into the conflict
// forks of session id, depth generations below the session p changed.
func changeConflictForks(ctx context.Context, tx Tx, id string, st synclog.Stamp, p *synclog.SessionChanged, depth int) error {
	if depth > maxConflictDepth {
		return fmt.Errorf("change of %s: more than %d conflict forks deep", p.SessionID, maxConflictDepth)
	}
	forks, err := tx.ForksOf(ctx, id, ConflictFork)
	if err != nil {
		return fmt.Errorf("find the conflict forks of %s: %w", id, err)
	}
	slices.Sort(forks)
	for _, f := range forks {
		if err := mergeChange(ctx, tx, f, st, p, depth); err != nil {
			return err
		}
	}
	return nil
}

// heldMessage returns message seq of session id as the session that
// holds it reads it (id, or the session a rewind or a conflict moved it
// to: locate), and the store that holds its row, when its id is mid;
// otherwise the record that names it waits.
func heldMessage(ctx context.Context, tx Tx, id string, seq int64, mid string) (*loom.Message, string, error) {
	named, err := tx.SessionForWrite(ctx, id)
	if err != nil {
		return nil, "", err
	}
	if named == nil {
		return nil, "", fmt.Errorf("%w: message %s of session %s, which this store does not hold", ErrWaits, mid, id)
	}
	cur, err := locateOrWait(ctx, tx, named, seq, mid)
	if err != nil {
		return nil, "", err
	}
	msgs, err := tx.Messages(ctx, cur.ID, seq, seq)
	if err != nil {
		return nil, "", err
	}
	if len(msgs) == 0 || msgs[0].ID != mid {
		return nil, "", fmt.Errorf("session %s holds no message %s at seq %d", cur.ID, mid, seq)
	}
	store, err := tx.StoreOf(ctx, cur.ID, seq)
	if err != nil {
		return nil, "", fmt.Errorf("read spans of %s: %w", cur.ID, err)
	}
	return msgs[0], store, nil
}

// applyPart merges part update p into its message: the part keeps the
// update that newerPart ranks first.
func applyPart(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.PartUpdated) error {
	m, _, err := heldMessage(ctx, tx, p.SessionID, p.Seq, p.MessageID)
	if err != nil {
		return err
	}
	// As UpdatePart: the session is as recent as the update, whether or
	// not the part keeps it (its writer's copy took it), unless it is
	// imported (as recent as its source). The session the record names:
	// not one a rewind or a conflict moved the message to (see
	// appendMessages).
	if err := tx.Touch(ctx, p.SessionID, st.HLC.Wall()); err != nil {
		return err
	}
	if i := slices.IndexFunc(m.Parts, func(x loom.Part) bool { return x.ID == p.Part.ID }); i >= 0 {
		cs, err := tx.MessageStamp(ctx, m.ID, false)
		if err != nil {
			return err
		}
		if ps, ok, err := tx.PartStamp(ctx, m.ID, p.Part.ID); err != nil {
			return fmt.Errorf("read stamp of part %s: %w", p.Part.ID, err)
		} else if ok {
			cs = ps
		}
		if !newerPart(m.Parts[i], cs, p.Part, st) {
			return nil
		}
		if ReplacesText(m.Parts[i], p.Part) {
			// A redaction's: the text it replaces must not stay
			// readable in the store's files.
			if err := tx.Replaced(ctx); err != nil {
				return err
			}
		}
	}
	before := m.Text()
	if err := replacePart(m, p.SessionID, p.Seq, p.Part); err != nil {
		return err
	}
	parts, text, err := sqlstore.EncodeBody(m)
	if err != nil {
		return err
	}
	if err := writeMessage(ctx, tx, m.SessionID, m.Seq, sqlstore.Body{Parts: parts, Text: text}); err != nil {
		return fmt.Errorf("update message %d: %w", m.Seq, err)
	}
	if err := replacedPrompt(ctx, tx, m, before); err != nil {
		return err
	}
	return tx.StampPart(ctx, m.ID, p.Part.ID, st)
}

// applyUsage sets the usage of its message when p is the latest update
// of it.
func applyUsage(ctx context.Context, tx Tx, st synclog.Stamp, p *synclog.UsageUpdated) error {
	m, store, err := heldMessage(ctx, tx, p.SessionID, p.Seq, p.MessageID)
	if err != nil {
		return err
	}
	cs, err := tx.MessageStamp(ctx, m.ID, true)
	if err != nil {
		return err
	}
	if !cs.Less(st) {
		return nil
	}
	if err := tx.MoveUsage(ctx, m.SessionID, store, p.Seq, m.Usage, p.Usage); err != nil {
		return err
	}
	return tx.StampUsage(ctx, m.ID, st)
}
