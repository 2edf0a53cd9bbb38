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
	"github.com/loomhq/loom/synclog"
)

// applyChanged merges metadata change p into its session, field by field:
// each field keeps the write with the greatest stamp (synclog.Meta), and
// the session's updated_at the greatest time of the changes it holds.
func applyChanged(ctx context.Context, w writes, st synclog.Stamp, p *synclog.SessionChanged) error {
	cur, err := w.SessionForWrite(ctx, p.SessionID)
	if err != nil {
		return err
	}
	if cur == nil {
		return fmt.Errorf("%w: a change of session %s, which this store does not hold", ErrSyncWaits, p.SessionID)
	}
	m, err := loadMeta(ctx, w, cur.ID)
	if err != nil {
		return err
	}
	before := m
	m.Apply(st, p, 0)
	var set []string
	var args []any
	col := func(name string, v any) {
		set = append(set, name+" = ?")
		args = append(args, v)
	}
	took := func(a, b synclog.Stamp) bool { return a != b }
	for _, f := range []struct {
		name          string
		before, after *synclog.Field[string]
	}{{"title", &before.Title, &m.Title}, {"description", &before.Description, &m.Description},
		{"cwd", &before.Cwd, &m.Cwd}, {"model", &before.Model, &m.Model}, {"provider", &before.Provider, &m.Provider},
		{"profile", &before.Profile, &m.Profile}, {"git_branch", &before.GitBranch, &m.GitBranch}} {
		if took(f.before.Stamp, f.after.Stamp) {
			col(f.name, f.after.Value)
		}
	}
	if took(before.Key.Stamp, m.Key.Stamp) {
		col("key", nullString(m.Key.Value))
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
	if p.At != nil {
		set = append(set, "updated_at = max(updated_at, ?)")
		args = append(args, loom.FormatTime(*p.At))
	}
	if len(set) > 0 {
		_, err := w.ExecContext(ctx, `UPDATE sessions SET `+strings.Join(set, ", ")+` WHERE id = ?`, append(args, cur.ID)...)
		if isUnique(err) {
			return &NotAppliedError{Type: p.Type(), Why: fmt.Sprintf("another session here has key %q (two machines gave one key to two sessions)", m.Key.Value)}
		}
		if err != nil {
			return fmt.Errorf("update session %s: %w", cur.ID, err)
		}
	}
	return saveMeta(ctx, w, cur.ID, m)
}

// heldMessage returns message seq of session id as the session reads
// it, and the store that holds its row, when its id is mid; otherwise
// the record that names it cannot apply here yet.
func heldMessage(ctx context.Context, w writes, t synclog.Type, id string, seq int64, mid string) (*loom.Message, string, error) {
	msgs, err := spanMessages(ctx, w, id, seq, seq, "", false, 0)
	if err != nil {
		return nil, "", err
	}
	if len(msgs) == 0 || msgs[0].ID != mid {
		return nil, "", &NotAppliedError{Type: t, Why: fmt.Sprintf(
			"session %s holds no message %s at seq %d (a rewind or a conflict moved it, or it is not here yet)", id, mid, seq)}
	}
	var store string
	if err := w.QueryRowContext(ctx, `SELECT store_id FROM spans WHERE session_id = ?1 AND first_seq <= ?2 AND last_seq >= ?2`,
		id, seq).Scan(&store); err != nil {
		return nil, "", fmt.Errorf("read spans of %s: %w", id, err)
	}
	return msgs[0], store, nil
}

// applyPart merges part update p into its message: the part keeps the
// update that synclog.NewerPart ranks first.
func applyPart(ctx context.Context, w writes, st synclog.Stamp, p *synclog.PartUpdated) error {
	m, _, err := heldMessage(ctx, w, p.Type(), p.SessionID, p.Seq, p.MessageID)
	if err != nil {
		return err
	}
	// As UpdatePart: the session is as recent as the update, whether or
	// not the part keeps it (its writer's copy took it), unless it is
	// imported (as recent as its source).
	if _, err := w.ExecContext(ctx, `UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ? AND source_tool = ''`,
		loom.FormatTime(st.HLC.Wall()), m.SessionID); err != nil {
		return fmt.Errorf("update session %s: %w", m.SessionID, err)
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
	m, store, err := heldMessage(ctx, w, p.Type(), p.SessionID, p.Seq, p.MessageID)
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
	if err := setUsage(ctx, w.tx, p.SessionID, store, p.Seq, m.Usage, p.Usage); err != nil {
		return err
	}
	return stampUsage(ctx, w, st, m.ID)
}
