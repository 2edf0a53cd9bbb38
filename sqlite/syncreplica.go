package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/synclog"
)

// syncTx is a write transaction as the rules of a store that syncs
// take it: each step one statement or scan in SQLite's SQL.
type syncTx struct{ writes }

// steps returns the transaction with every role of sessionstore.Tx: a
// SQLite store serves them all, sync's included.
func (w syncTx) steps() sessionstore.Tx {
	return sessionstore.Tx{
		SessionSteps: w, BodySteps: w, ForkSteps: w, TrashSteps: w, ImportSteps: w, SettleSteps: w, PromptTx: w,
		SyncSteps: w, Ender: w,
	}
}

// Host implements sessionstore.ApplySteps.
func (w syncTx) Host(ctx context.Context) (synclog.HostID, error) { return syncHost(ctx, w) }

// Owner implements sessionstore.ApplySteps.
func (w syncTx) Owner() string { return w.s.holder.Owner }

// Applied implements sessionstore.ApplySteps.
func (w syncTx) Applied(ctx context.Context, host synclog.HostID) (int64, error) {
	var last int64
	err := w.QueryRowContext(ctx, `SELECT idx FROM sync_applied WHERE host = ?`, string(host)).Scan(&last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("read sync state: %w", err)
	}
	return last, nil
}

// SetApplied implements sessionstore.ApplySteps.
func (w syncTx) SetApplied(ctx context.Context, host synclog.HostID, idx int64) error {
	if _, err := w.ExecContext(ctx, `INSERT INTO sync_applied (host, idx) VALUES (?, ?)
		ON CONFLICT (host) DO UPDATE SET idx = excluded.idx`, string(host), idx); err != nil {
		return fmt.Errorf("write sync state: %w", err)
	}
	return nil
}

// Observe implements sessionstore.ApplySteps: other processes, and this one once
// restarted, stamp their changes after hlc too.
func (w syncTx) Observe(ctx context.Context, hlc synclog.HLC) error {
	if err := w.s.clock.Observe(hlc); err != nil {
		return err
	}
	if _, err := w.ExecContext(ctx, syncAppliedStampSQL, int64(hlc)); err != nil {
		return fmt.Errorf("write sync state: %w", err)
	}
	return nil
}

// stateTable returns the table and column that keep state kind.
func stateTable(kind sessionstore.State) (table, col string) {
	switch kind {
	case sessionstore.LifeState:
		return "sync_life", "life"
	case sessionstore.PurgeKeptState:
		return "sync_purge_kept", "kept"
	}
	return "sync_meta", "meta"
}

// LoadState implements sessionstore.StampSteps.
func (w syncTx) LoadState(ctx context.Context, kind sessionstore.State, id string) (string, error) {
	table, col := stateTable(kind)
	var text string
	err := w.QueryRowContext(ctx, `SELECT `+col+` FROM `+table+` WHERE session_id = ?`, id).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return text, err
}

// SaveState implements sessionstore.StampSteps.
func (w syncTx) SaveState(ctx context.Context, kind sessionstore.State, id, value string) error {
	table, col := stateTable(kind)
	_, err := w.ExecContext(ctx, `INSERT INTO `+table+` (session_id, `+col+`) VALUES (?, ?)
		ON CONFLICT (session_id) DO UPDATE SET `+col+` = excluded.`+col, id, value)
	return err
}

// States implements sessionstore.StampSteps.
func (w syncTx) States(ctx context.Context, kind sessionstore.State) ([]sessionstore.StateRow, error) {
	table, col := stateTable(kind)
	return rowscan.All(ctx, rowsOf{w}, func(r rowscan.Scanner) (sessionstore.StateRow, error) {
		var x sessionstore.StateRow
		return x, r.Scan(&x.ID, &x.Value)
	}, `SELECT session_id, `+col+` FROM `+table)
}

// MessageStamp implements sessionstore.StampSteps.
func (w syncTx) MessageStamp(ctx context.Context, id string, usage bool) (synclog.Stamp, error) {
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

// PartStamp implements sessionstore.StampSteps.
func (w syncTx) PartStamp(ctx context.Context, mid, pid string) (synclog.Stamp, bool, error) {
	var st synclog.Stamp
	err := w.QueryRowContext(ctx, `SELECT hlc, host FROM sync_parts WHERE message_id = ? AND part_id = ?`, mid, pid).Scan(&st.HLC, &st.Host)
	if errors.Is(err, sql.ErrNoRows) {
		return st, false, nil
	}
	return st, err == nil, err
}

// StampMessage implements sessionstore.StampSteps.
func (w syncTx) StampMessage(ctx context.Context, id string, st synclog.Stamp) error {
	_, err := w.ExecContext(ctx, `INSERT INTO sync_messages (id, hlc, host) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		id, st.HLC, string(st.Host))
	return err
}

// StampPart implements sessionstore.StampSteps.
func (w syncTx) StampPart(ctx context.Context, mid, pid string, st synclog.Stamp) error {
	if _, err := w.ExecContext(ctx, `INSERT INTO sync_parts (message_id, part_id, hlc, host) VALUES (?, ?, ?, ?)
		ON CONFLICT (message_id, part_id) DO UPDATE SET hlc = excluded.hlc, host = excluded.host`,
		mid, pid, st.HLC, string(st.Host)); err != nil {
		return fmt.Errorf("stamp part %s: %w", pid, err)
	}
	return nil
}

// StampUsage implements sessionstore.StampSteps.
func (w syncTx) StampUsage(ctx context.Context, mid string, st synclog.Stamp) error {
	if _, err := w.ExecContext(ctx, `INSERT INTO sync_messages (id, hlc, host, usage_hlc, usage_host) VALUES (?1, 0, '', ?2, ?3)
		ON CONFLICT (id) DO UPDATE SET usage_hlc = ?2, usage_host = ?3`, mid, st.HLC, string(st.Host)); err != nil {
		return fmt.Errorf("stamp usage of %s: %w", mid, err)
	}
	return nil
}

// Purged implements sessionstore.LineageSteps.
func (w syncTx) Purged(ctx context.Context, id string) (bool, error) {
	var gone bool
	if err := w.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sync_purged WHERE session_id = ?)`, id).Scan(&gone); err != nil {
		return false, fmt.Errorf("read purged sessions: %w", err)
	}
	return gone, nil
}

// MarkPurged implements sessionstore.LineageSteps.
func (w syncTx) MarkPurged(ctx context.Context, id string) error {
	_, err := w.ExecContext(ctx, `INSERT INTO sync_purged (session_id) VALUES (?) ON CONFLICT DO NOTHING`, id)
	return err
}

// DeleteRow implements sessionstore.MergeSteps.
func (w syncTx) DeleteRow(ctx context.Context, id string) error {
	_, err := w.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	return err
}

// SaveFork implements sessionstore.LineageSteps.
func (w syncTx) SaveFork(ctx context.Context, id, parent string, base int64, kind sessionstore.ForkKind) error {
	if _, err := w.ExecContext(ctx, `INSERT INTO sync_forks (id, parent, base, kind) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET parent = excluded.parent, base = excluded.base, kind = excluded.kind`,
		id, parent, base, string(kind)); err != nil {
		return fmt.Errorf("keep fork %s: %w", id, err)
	}
	return nil
}

// ForksOf implements sessionstore.LineageSteps.
func (w syncTx) ForksOf(ctx context.Context, parent string, kinds ...sessionstore.ForkKind) ([]string, error) {
	args := []any{parent}
	for _, k := range kinds {
		args = append(args, string(k))
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(kinds)), ", ")
	return rowscan.All(ctx, rowsOf{w}, rowscan.String,
		`SELECT id FROM sync_forks WHERE parent = ? AND kind IN (`+in+`) ORDER BY base, id`, args...)
}

// TwinFork implements sessionstore.LineageSteps.
func (w syncTx) TwinFork(ctx context.Context, of, parent, id, title string, turn int) error {
	if _, err := w.ExecContext(ctx, `INSERT INTO sessions (`+query.ForkColumns+`)
		SELECT ?1, s.user_id, NULL, s.surface, ?2, s.description, 'fork', ?3, ?4, s.project_id,
			s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile, s.message_count,
			s.turn_count, s.summary_seq, s.last_prompt, s.input_tokens, s.output_tokens, s.reasoning_tokens,
			s.cache_read_tokens, s.cache_write_tokens, s.cache_write_1h_tokens, s.cost_usd, s.api_calls, s.compactions,
			s.created_at, s.updated_at, s.git_branch
		FROM sessions s WHERE s.id = ?5`, id, title, parent, turn, of); err != nil {
		return err
	}
	spans, err := readSpans(ctx, w, of)
	if err != nil {
		return err
	}
	var last int64
	if len(spans) > 0 {
		last = spans[len(spans)-1].Last
	}
	return writeSpans(ctx, w.writes, id, span.Inherit(spans, last, id))
}

// MoveForks implements sessionstore.LineageSteps.
func (w syncTx) MoveForks(ctx context.Context, parent, to string, from int64) error {
	for _, q := range []string{
		`UPDATE sessions SET parent_id = ?1 WHERE id IN (SELECT id FROM sync_forks WHERE parent = ?2 AND base >= ?3)`,
		`UPDATE sync_forks SET parent = ?1 WHERE parent = ?2 AND base >= ?3`,
	} {
		if _, err := w.ExecContext(ctx, q, to, parent, from); err != nil {
			return err
		}
	}
	return nil
}

// Messages implements sessionstore.MergeSteps.
func (w syncTx) Messages(ctx context.Context, id string, from, to int64) ([]*loom.Message, error) {
	return spanMessages(ctx, w, id, from, to, "", false, 0)
}

// StoreOf implements sessionstore.MergeSteps.
func (w syncTx) StoreOf(ctx context.Context, id string, seq int64) (string, error) {
	var store string
	err := w.QueryRowContext(ctx, `SELECT store_id FROM spans WHERE session_id = ?1 AND first_seq <= ?2 AND last_seq >= ?2`,
		id, seq).Scan(&store)
	return store, err
}

// Touch implements sessionstore.MergeSteps.
func (w syncTx) Touch(ctx context.Context, id string, at time.Time) error {
	if _, err := w.ExecContext(ctx, `UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ? AND source_tool = ''`,
		loom.FormatTime(at), id); err != nil {
		return fmt.Errorf("update session %s: %w", id, err)
	}
	return nil
}

// SetColumns implements sessionstore.MergeSteps.
func (w syncTx) SetColumns(ctx context.Context, id string, c sessionstore.Columns) error {
	var set []string
	var args []any
	col := func(name string, v any) {
		set = append(set, name+" = ?")
		args = append(args, v)
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"title", c.Title}, {"description", c.Description}, {"cwd", c.Cwd}, {"model", c.Model},
		{"provider", c.Provider}, {"profile", c.Profile}, {"git_branch", c.GitBranch}, {"surface", c.Surface}} {
		if f.v != nil {
			col(f.name, *f.v)
		}
	}
	if c.ClearKey {
		col("key", nil)
	}
	if p := c.Project; p != nil {
		col("project_id", p.ID)
		col("project_name", p.Name)
		col("project_root", p.Root)
	}
	if c.Archive {
		col("archived_at", nullTime(c.Archived))
	}
	if c.UpdatedAt != nil {
		set = append(set, "updated_at = max(updated_at, ?)")
		args = append(args, loom.FormatTime(*c.UpdatedAt))
	}
	if len(set) == 0 {
		return nil
	}
	_, err := w.ExecContext(ctx, `UPDATE sessions SET `+strings.Join(set, ", ")+` WHERE id = ?`, append(args, id)...)
	return err
}

// SetWriterRow implements sessionstore.MergeSteps.
func (w syncTx) SetWriterRow(ctx context.Context, row *loom.Session) error {
	_, err := w.ExecContext(ctx, `UPDATE sessions SET surface = ?, description = ?, project_id = ?, project_name = ?,
		project_root = ?, cwd = ?, model = ?, provider = ?, profile = ?, git_branch = ?, created_at = ?, updated_at = ?
		WHERE id = ?`, row.Surface, row.Description, row.Project.ID, row.Project.Name, row.Project.Root, row.Cwd, row.Model,
		row.Provider, row.Profile, row.GitBranch, loom.FormatTime(row.CreatedAt), loom.FormatTime(row.UpdatedAt), row.ID)
	return err
}

// SetConflictRow implements sessionstore.MergeSteps.
func (w syncTx) SetConflictRow(ctx context.Context, parent, id string, created time.Time) error {
	_, err := w.ExecContext(ctx, `UPDATE sessions SET created_at = ?1, updated_at = ?1, key = NULL,
		archived_at = (SELECT archived_at FROM sessions WHERE id = ?2) WHERE id = ?3`, loom.FormatTime(created), parent, id)
	return err
}

// SetDeleted implements sessionstore.MergeSteps.
func (w syncTx) SetDeleted(ctx context.Context, id string, at *time.Time) (bool, error) {
	res, err := w.ExecContext(ctx, `UPDATE sessions SET deleted_at = ?1,
		key = CASE WHEN ?1 IS NULL THEN NULL ELSE key END WHERE id = ?2 AND deleted_at IS NOT ?1`,
		nullTime(at), id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// KeyOf implements sessionstore.KeySteps.
func (w syncTx) KeyOf(ctx context.Context, id string) (sessionstore.KeyScope, bool, error) {
	var k sessionstore.KeyScope
	var key sql.NullString
	err := w.QueryRowContext(ctx, `SELECT user_id, project_id, key FROM sessions WHERE id = ?`, id).Scan(&k.User, &k.Project, &key)
	if errors.Is(err, sql.ErrNoRows) {
		return sessionstore.KeyScope{}, false, nil
	}
	k.Key = key.String
	return k, err == nil, err
}

// Claimants implements sessionstore.KeySteps.
func (w syncTx) Claimants(ctx context.Context, k sessionstore.KeyScope) ([]string, error) {
	return rowscan.All(ctx, rowsOf{w}, rowscan.String, `SELECT s.id FROM sessions s
		WHERE s.user_id = ?1 AND s.project_id = ?2 AND s.deleted_at IS NULL AND (s.key = ?3
			OR s.id IN (SELECT session_id FROM sync_meta WHERE json_extract(meta, '$.Key.Value') = ?3
				AND json_extract(meta, '$.Key.Value') <> ''))`, k.User, k.Project, k.Key)
}

// GiveKey implements sessionstore.KeySteps.
func (w syncTx) GiveKey(ctx context.Context, k sessionstore.KeyScope, holder string) error {
	if _, err := w.ExecContext(ctx, `UPDATE sessions SET key = NULL
		WHERE user_id = ? AND project_id = ? AND key = ? AND deleted_at IS NULL AND id <> ?`,
		k.User, k.Project, k.Key, holder); err != nil || holder == "" {
		return err
	}
	_, err := w.ExecContext(ctx, `UPDATE sessions SET key = ?, surface = ? WHERE id = ?`, k.Key, loom.SurfaceOf(k.Key), holder)
	return err
}

// KeyTaken implements sessionstore.KeySteps.
func (w syncTx) KeyTaken(ctx context.Context, k sessionstore.KeyScope, id string) (bool, error) {
	var taken bool
	err := w.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sessions WHERE user_id = ? AND project_id = ? AND key = ?
		AND deleted_at IS NULL AND id <> ?)`, k.User, k.Project, k.Key, id).Scan(&taken)
	return taken, err
}

// KeepFragment implements sessionstore.FragmentSteps.
func (w syncTx) KeepFragment(ctx context.Context, host synclog.HostID, idx int64, data []byte) error {
	_, err := w.ExecContext(ctx, `INSERT INTO sync_fragments (host, idx, data) VALUES (?, ?, ?)
		ON CONFLICT (host, idx) DO UPDATE SET data = excluded.data`, string(host), idx, data)
	return err
}

// Fragments implements sessionstore.FragmentSteps.
func (w syncTx) Fragments(ctx context.Context, host synclog.HostID, first, last int64) ([]sessionstore.Fragment, error) {
	return rowscan.All(ctx, rowsOf{w}, func(r rowscan.Scanner) (sessionstore.Fragment, error) {
		var f sessionstore.Fragment
		return f, r.Scan(&f.Index, &f.Data)
	}, `SELECT idx, data FROM sync_fragments WHERE host = ? AND idx BETWEEN ? AND ? ORDER BY idx`, string(host), first, last)
}

// DropFragments implements sessionstore.FragmentSteps.
func (w syncTx) DropFragments(ctx context.Context, host synclog.HostID, last int64) error {
	_, err := w.ExecContext(ctx, `DELETE FROM sync_fragments WHERE host = ? AND idx <= ?`, string(host), last)
	return err
}

// Retire implements sessionstore.ApplySteps: the earliest word holds.
func (w syncTx) Retire(ctx context.Context, host synclog.HostID, after int64) error {
	_, err := w.ExecContext(ctx, `INSERT INTO sync_state (name, value) VALUES ('retired ' || ?1, CAST(?2 AS TEXT))
		ON CONFLICT (name) DO UPDATE SET value = CAST(min(CAST(value AS INTEGER), ?2) AS TEXT)`, string(host), after)
	if err != nil {
		return fmt.Errorf("retire host %s: %w", host, err)
	}
	return nil
}

// Pos implements sessionstore.LogRows.
func (w syncTx) Pos(ctx context.Context) (synclog.HostID, int64, error) { return syncPos(ctx, w) }

// LogLen implements sessionstore.LogRows.
func (w syncTx) LogLen(ctx context.Context) (int64, error) {
	var rows int64
	err := w.QueryRowContext(ctx, syncLastIndexSQL).Scan(&rows)
	return rows, err
}

// LogHLC implements sessionstore.LogRows.
func (w syncTx) LogHLC(ctx context.Context, row int64) (synclog.HLC, error) {
	var hlc synclog.HLC
	err := w.QueryRowContext(ctx, `SELECT hlc FROM sync_log WHERE idx = ?`, row).Scan(&hlc)
	return hlc, err
}

// CopyLog implements sessionstore.LogRows: SQLite copies the rows, never held
// here.
func (w syncTx) CopyLog(ctx context.Context, after, upto int64) (int, error) {
	res, err := w.ExecContext(ctx, `INSERT INTO sync_log (hlc, payload)
		SELECT hlc, payload FROM sync_log WHERE idx > ? AND idx <= ? ORDER BY idx`, after, upto)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// ReadLog implements sessionstore.LogRows: a payload's second byte is its
// type.
func (w syncTx) ReadLog(ctx context.Context, after int64, types ...synclog.Type) ([]sessionstore.LogRow, error) {
	args := []any{after}
	for _, t := range types {
		args = append(args, []byte{byte(t)})
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(types)), ", ")
	return rowscan.All(ctx, rowsOf{w}, func(r rowscan.Scanner) (sessionstore.LogRow, error) {
		var x sessionstore.LogRow
		return x, r.Scan(&x.Row, &x.Payload)
	}, `SELECT idx, payload FROM sync_log WHERE idx > ? AND substr(payload, 2, 1) IN (`+in+`)`, args...)
}

// SetLogPayload implements sessionstore.LogRows.
func (w syncTx) SetLogPayload(ctx context.Context, row int64, payload []byte) error {
	_, err := w.ExecContext(ctx, `UPDATE sync_log SET payload = ? WHERE idx = ?`, payload, row)
	return err
}

// Rehost implements sessionstore.LogRows.
func (w syncTx) Rehost(ctx context.Context, r sessionstore.HostMove, base int64, cut synclog.HLC) error {
	for _, q := range []string{
		`UPDATE sync_state SET value = ? WHERE name = 'host'`,
		`INSERT INTO sync_state (name, value) VALUES ('base', CAST(?2 AS TEXT))
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
		`INSERT INTO sync_applied (host, idx) VALUES (?3, ?4) ON CONFLICT (host) DO UPDATE SET idx = excluded.idx`,
		`UPDATE sync_messages SET host = ?1 WHERE host = ?3 AND hlc > ?5`,
		`UPDATE sync_messages SET usage_host = ?1 WHERE usage_host = ?3 AND usage_hlc > ?5`,
		`UPDATE sync_parts SET host = ?1 WHERE host = ?3 AND hlc > ?5`,
	} {
		if _, err := w.ExecContext(ctx, q, string(r.New), base, string(r.Old), r.Shared, cut); err != nil {
			return err
		}
	}
	w.s.host.Store(&r.New)
	return nil
}
