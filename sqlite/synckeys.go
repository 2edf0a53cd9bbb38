package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
	"github.com/loomhq/loom/synclog"
)

// keyScope is where a key names one session: a user's project (the
// sessions_key index).
type keyScope struct {
	user, project, key string
}

// scopeOf returns the scope of the key session id has, or claims when it
// lost it to another session's earlier claim.
func scopeOf(ctx context.Context, w writes, id string) (keyScope, error) {
	k, _, err := claimOf(ctx, w, id)
	return k, err
}

// claimOf returns the key session id claims, in its scope, and the stamp
// of the claim: the key its merged metadata names (Meta.Key), or its
// row's key with the zero stamp when its key was never stamped.
func claimOf(ctx context.Context, w writes, id string) (keyScope, synclog.Stamp, error) {
	var k keyScope
	var key sql.NullString
	err := w.QueryRowContext(ctx, `SELECT user_id, project_id, key FROM sessions WHERE id = ?`, id).Scan(&k.user, &k.project, &key)
	if errors.Is(err, sql.ErrNoRows) {
		return k, synclog.Stamp{}, nil
	}
	if err != nil {
		return k, synclog.Stamp{}, fmt.Errorf("read key of %s: %w", id, err)
	}
	m, err := loadMeta(ctx, w, id)
	if err != nil {
		return k, synclog.Stamp{}, err
	}
	k.key = key.String
	if !m.Key.Stamp.IsZero() {
		k.key = m.Key.Value
	}
	return k, m.Key.Stamp, nil
}

// settleKey gives key k to the live session with the earliest claim on
// it (synclog.KeyHolder) and takes it from the others: two machines that
// each started a session with one key in one project keep both sessions,
// and every host gives the key to the same one whatever order their
// records arrive in. A session claims the key its merged metadata says
// (claimOf). It is called wherever the claims on a key change: a session
// made, or given another key or project, here or by a record, or going
// to the trash or coming back from it. A purge, which removes the session's row and its
// claim with it, settles nothing: on the machine that made it the rows
// are gone before it is recorded, so a key it lets go goes to no session
// on any machine.
func settleKey(ctx context.Context, w writes, k keyScope) error {
	if k.key == "" {
		return nil
	}
	ids, err := rowscan.All(ctx, rowsOf{w}, rowscan.String, `SELECT s.id FROM sessions s
		WHERE s.user_id = ?1 AND s.project_id = ?2 AND s.deleted_at IS NULL AND (s.key = ?3
			OR s.id IN (SELECT session_id FROM sync_meta WHERE json_extract(meta, '$.Key.Value') = ?3
				AND json_extract(meta, '$.Key.Value') <> ''))`, k.user, k.project, k.key)
	if err != nil {
		return fmt.Errorf("find the sessions that claim key %q: %w", k.key, err)
	}
	var claims []synclog.KeyClaim
	for _, id := range ids {
		c, st, err := claimOf(ctx, w, id)
		if err != nil {
			return err
		}
		if c == k { // else its row has the key, but its claim is another's
			claims = append(claims, synclog.KeyClaim{SessionID: id, Stamp: st})
		}
	}
	holder, ok := synclog.KeyHolder(claims)
	if _, err := w.ExecContext(ctx, `UPDATE sessions SET key = NULL
		WHERE user_id = ? AND project_id = ? AND key = ? AND deleted_at IS NULL AND id <> ?`,
		k.user, k.project, k.key, holder.SessionID); err != nil {
		return fmt.Errorf("settle key %q: %w", k.key, err)
	}
	if !ok {
		return nil
	}
	if _, err := w.ExecContext(ctx, `UPDATE sessions SET key = ?, surface = ? WHERE id = ?`,
		k.key, loom.SurfaceOf(k.key), holder.SessionID); err != nil {
		return fmt.Errorf("settle key %q: %w", k.key, err)
	}
	return nil
}

// keyTaken reports whether a live session other than id has key k.
func keyTaken(ctx context.Context, w writes, k keyScope, id string) (bool, error) {
	if k.key == "" {
		return false, nil
	}
	var taken bool
	if err := w.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sessions WHERE user_id = ? AND project_id = ? AND key = ?
		AND deleted_at IS NULL AND id <> ?)`, k.user, k.project, k.key, id).Scan(&taken); err != nil {
		return false, fmt.Errorf("read key %q: %w", k.key, err)
	}
	return taken, nil
}
