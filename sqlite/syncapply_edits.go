package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
	"github.com/loomhq/loom/synclog"
)

// applyChanged merges metadata change p into its session, field by field:
// each field keeps the write with the greatest stamp (synclog.Meta), and
// the session's updated_at the greatest time of the changes it holds.
// The session's conflict forks take the change too, as their parent's.
func applyChanged(ctx context.Context, w writes, st synclog.Stamp, p *synclog.SessionChanged) error {
	cur, err := w.SessionForWrite(ctx, p.SessionID)
	if err != nil {
		return err
	}
	if cur == nil {
		return fmt.Errorf("%w: a change of session %s, which this store does not hold", ErrSyncWaits, p.SessionID)
	}
	return mergeChange(ctx, w, cur.ID, st, p, 0)
}

// mergeChange merges change p, stamped st, into session id, depth
// conflict-fork generations below the session p changed, writing the
// fields it wins into the row, and then into id's conflict forks, one
// generation farther.
func mergeChange(ctx context.Context, w writes, id string, st synclog.Stamp, p *synclog.SessionChanged, depth int) error {
	m, err := loadMeta(ctx, w, id)
	if err != nil {
		return err
	}
	before := m
	m.Apply(st, p, depth)
	var set []string
	var args []any
	col := func(name string, v any) {
		set = append(set, name+" = ?")
		args = append(args, v)
	}
	took := func(a, b synclog.Stamp) bool { return a != b }
	switch {
	case !took(before.Title.Stamp, m.Title.Stamp):
	case m.Title.Depth == 0:
		col("title", m.Title.Value)
	case m.Title.Value != "":
		// A conflict fork shows its parent's title as a conflict copy's;
		// an empty one, which a title made from the first prompt takes,
		// leaves the fork's as it is.
		col("title", synclog.ConflictTitle(m.Title.Value))
	}
	for _, f := range []struct {
		name          string
		before, after *synclog.Field[string]
	}{{"description", &before.Description, &m.Description},
		{"cwd", &before.Cwd, &m.Cwd}, {"model", &before.Model, &m.Model}, {"provider", &before.Provider, &m.Provider},
		{"profile", &before.Profile, &m.Profile}, {"git_branch", &before.GitBranch, &m.GitBranch}} {
		if took(f.before.Stamp, f.after.Stamp) {
			col(f.name, f.after.Value)
		}
	}
	// A new key or project changes which sessions claim a key: the
	// session lets its key go here, and settleKey gives the old one and
	// the new one to the earliest claims.
	var old keyScope
	rekey := took(before.Key.Stamp, m.Key.Stamp) || took(before.Project.Stamp, m.Project.Stamp)
	if rekey {
		if old, err = scopeOf(ctx, w, id); err != nil {
			return err
		}
		col("key", nil)
		if m.Key.Value != "" {
			col("surface", loom.SurfaceOf(m.Key.Value))
		}
	}
	if took(before.Project.Stamp, m.Project.Stamp) {
		col("project_id", m.Project.Value.ID)
		col("project_name", m.Project.Value.Name)
		col("project_root", m.Project.Value.Root)
	}
	if took(before.Archived.Stamp, m.Archived.Stamp) {
		col("archived_at", nullTime(m.Archived.Value))
	}
	if p.At != nil && depth == 0 {
		set = append(set, "updated_at = max(updated_at, ?)")
		args = append(args, loom.FormatTime(*p.At))
	}
	if len(set) > 0 {
		if _, err := w.ExecContext(ctx, `UPDATE sessions SET `+strings.Join(set, ", ")+` WHERE id = ?`, append(args, id)...); err != nil {
			return fmt.Errorf("update session %s: %w", id, err)
		}
	}
	if err := saveMeta(ctx, w, id, m); err != nil {
		return err
	}
	if rekey {
		now, err := scopeOf(ctx, w, id)
		if err != nil {
			return err
		}
		if err := settleKey(ctx, w, now); err != nil {
			return err
		}
		if err := settleKey(ctx, w, old); err != nil {
			return err
		}
	}
	return changeConflictForks(ctx, w, id, st, p, depth+1)
}

// changeConflictForks merges change p, stamped st, into the conflict
// forks of session id, depth generations below the session p changed.
func changeConflictForks(ctx context.Context, w writes, id string, st synclog.Stamp, p *synclog.SessionChanged, depth int) error {
	if depth > maxConflictDepth {
		return fmt.Errorf("change of %s: more than %d conflict forks deep", p.SessionID, maxConflictDepth)
	}
	forks, err := rowscan.All(ctx, rowsOf{w}, rowscan.String, `SELECT id FROM sync_forks WHERE parent = ? AND kind = 'conflict' ORDER BY id`, id)
	if err != nil {
		return fmt.Errorf("find the conflict forks of %s: %w", id, err)
	}
	for _, f := range forks {
		if err := mergeChange(ctx, w, f, st, p, depth); err != nil {
			return err
		}
	}
	return nil
}

// heldMessage returns message seq of session id as the session that
// holds it reads it (id, or the session a rewind or a conflict moved it
// to: locate), and the store that holds its row, when its id is mid;
// otherwise the record that names it waits.
func heldMessage(ctx context.Context, w writes, id string, seq int64, mid string) (*loom.Message, string, error) {
	named, err := w.SessionForWrite(ctx, id)
	if err != nil {
		return nil, "", err
	}
	if named == nil {
		return nil, "", fmt.Errorf("%w: message %s of session %s, which this store does not hold", ErrSyncWaits, mid, id)
	}
	cur, err := locateOrWait(ctx, w, named, seq, mid)
	if err != nil {
		return nil, "", err
	}
	msgs, err := spanMessages(ctx, w, cur.ID, seq, seq, "", false, 0)
	if err != nil {
		return nil, "", err
	}
	if len(msgs) == 0 || msgs[0].ID != mid {
		return nil, "", fmt.Errorf("session %s holds no message %s at seq %d", cur.ID, mid, seq)
	}
	var store string
	if err := w.QueryRowContext(ctx, `SELECT store_id FROM spans WHERE session_id = ?1 AND first_seq <= ?2 AND last_seq >= ?2`,
		cur.ID, seq).Scan(&store); err != nil {
		return nil, "", fmt.Errorf("read spans of %s: %w", cur.ID, err)
	}
	return msgs[0], store, nil
}

// applyPart merges part update p into its message: the part keeps the
// update that synclog.NewerPart ranks first.
func applyPart(ctx context.Context, w writes, st synclog.Stamp, p *synclog.PartUpdated) error {
	m, _, err := heldMessage(ctx, w, p.SessionID, p.Seq, p.MessageID)
	if err != nil {
		return err
	}
	// As UpdatePart: the session is as recent as the update, whether or
	// not the part keeps it (its writer's copy took it), unless it is
	// imported (as recent as its source). The session the record names:
	// not one a rewind or a conflict moved the message to (see
	// appendMessages).
	if err := touch(ctx, w, p.SessionID, st.HLC.Wall()); err != nil {
		return err
	}
	if i := slices.IndexFunc(m.Parts, func(x loom.Part) bool { return x.ID == p.Part.ID }); i >= 0 {
		cs, err := messageStamp(ctx, w, m.ID, false)
		if err != nil {
			return err
		}
		err = w.QueryRowContext(ctx, `SELECT hlc, host FROM sync_parts WHERE message_id = ? AND part_id = ?`, m.ID, p.Part.ID).Scan(&cs.HLC, &cs.Host)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read stamp of part %s: %w", p.Part.ID, err)
		}
		if !synclog.NewerPart(m.Parts[i], cs, p.Part, st) {
			return nil
		}
	}
	if err := sqlstore.ReplacePart(m, p.SessionID, p.Seq, p.Part); err != nil {
		return err
	}
	parts, text, err := sqlstore.EncodeBody(m)
	if err != nil {
		return err
	}
	if err := sqlstore.WriteMessage(ctx, w, m.SessionID, m.Seq, sqlstore.Body{Parts: parts, Text: text}); err != nil {
		return fmt.Errorf("update message %d: %w", m.Seq, err)
	}
	return stampPart(ctx, w, st, m.ID, p.Part.ID)
}

// applyUsage sets the usage of its message when p is the latest update
// of it.
func applyUsage(ctx context.Context, w writes, st synclog.Stamp, p *synclog.UsageUpdated) error {
	m, store, err := heldMessage(ctx, w, p.SessionID, p.Seq, p.MessageID)
	if err != nil {
		return err
	}
	cs, err := messageStamp(ctx, w, m.ID, true)
	if err != nil {
		return err
	}
	if !cs.Less(st) {
		return nil
	}
	if err := setUsage(ctx, w.tx, m.SessionID, store, p.Seq, m.Usage, p.Usage); err != nil {
		return err
	}
	return stampUsage(ctx, w, st, m.ID)
}
