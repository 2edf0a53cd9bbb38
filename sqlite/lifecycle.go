package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/loomhq/loom"
)

// newMessageID is SQL that makes a fresh UUIDv7 for a copied message from
// the original's id: the same 48-bit time (the copy keeps the original's
// created_at), new random bits, version 7, RFC 4122 variant.
const newMessageID = `substr(m.id, 1, 14) || '7' || substr(lower(hex(randomblob(2))), 2, 3) || '-' ||
	substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2, 3) || '-' ||
	lower(hex(randomblob(6)))`

// Fork implements loom.Store. The copied messages share their bodies with
// the source, so a fork moves no message text and re-indexes nothing. The
// fork's usage starts at zero: the copied history's calls were paid for
// in the session they were made in, and counting them again would double
// every total.
func (s *Store) Fork(ctx context.Context, id string, opts loom.ForkOptions) (*loom.Session, error) {
	var out *loom.Session
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		src, err := s.sessionTx(ctx, tx, id)
		if err != nil {
			return err
		}
		if src.DeletedAt != nil {
			return loom.Errorf(loom.ENOTFOUND, "session %s is in the trash", id)
		}
		turn := opts.Turn
		if turn < 0 || turn > src.TurnCount {
			return loom.Errorf(loom.EINVALID, "session %s has %d turns; cannot fork at turn %d", src.ID, src.TurnCount, turn)
		}
		if turn == 0 {
			turn = src.TurnCount
		}
		// The last message copied is the one before turn+1 starts.
		last := int64(src.MessageCount)
		var next sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT min(seq) FROM messages WHERE session_id = ? AND turn > ?`, src.ID, turn).Scan(&next); err != nil {
			return fmt.Errorf("fork %s: %w", src.ID, err)
		}
		if next.Valid {
			last = next.Int64 - 1
		}
		// The last prompt copied, from its text parts as Append does.
		prompt := ""
		if last > 0 {
			users, err := queryMessages(ctx, tx, `WHERE m.session_id = ? AND m.role = 'user' AND m.seq <= ? ORDER BY m.seq DESC LIMIT 1`, src.ID, last)
			if err != nil {
				return fmt.Errorf("fork %s: %w", src.ID, err)
			}
			if len(users) == 1 {
				prompt = loom.Truncate(users[0].Text(), loom.MaxPrompt)
			}
		}
		nid := opts.ID
		if nid == "" {
			nid = loom.NewID()
		}
		title := opts.Title
		if title == "" {
			base := loom.ForkTitleBase(src.Title)
			taken, err := queryStrings(ctx, tx, `SELECT title FROM sessions
				WHERE user_id = ? AND deleted_at IS NULL AND lower(substr(title, 1, ?)) = lower(?)`,
				src.UserID, utf8.RuneCountInString(base), base)
			if err != nil {
				return fmt.Errorf("fork %s: %w", src.ID, err)
			}
			title = loom.ForkTitle(src.Title, taken)
		}
		now := s.now()
		_, err = tx.ExecContext(ctx, `INSERT INTO sessions (id, user_id, key, surface, title, description,
			kind, parent_id, fork_turn, project_id, project_name, project_root, cwd, model, provider,
			profile, message_count, turn_count, summary_seq, last_prompt,
			input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
			cost_usd, api_calls, compactions, created_at, updated_at)
			SELECT ?, s.user_id, ?, s.surface, ?, s.description, 'fork', s.id, ?, s.project_id,
				s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile, ?, ?,
				coalesce((SELECT max(seq) FROM messages WHERE session_id = s.id AND role = 'summary' AND seq <= ?), 0),
				?,
				0, 0, 0, 0, 0, 0, 0, 0, ?, ?
			FROM sessions s
			WHERE s.id = ?`,
			nid, nullString(opts.Key), title, turn, last, turn, last, prompt, now, now, src.ID)
		if isUnique(err) {
			return loom.Errorf(loom.ECONFLICT, "a session with key %q already exists", opts.Key)
		}
		if err != nil {
			return fmt.Errorf("fork %s: %w", src.ID, err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO messages (session_id, seq, id, role, turn, body_id,
			model, provider, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
			cache_write_tokens, cost_usd, api_calls, compactions, error, created_at, completed_at)
			SELECT ?, seq, `+newMessageID+`, role, turn, body_id, model, provider, input_tokens,
				output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, cost_usd,
				api_calls, compactions, error, created_at, completed_at
			FROM messages m WHERE session_id = ? AND seq <= ?`, nid, src.ID, last)
		if err != nil {
			return fmt.Errorf("fork %s: copy messages: %w", src.ID, err)
		}
		out, err = s.sessionTx(ctx, tx, nid)
		return err
	})
	return out, err
}

// family is SQL for a session and its sub-agent sessions, recursively.
// UNION ends a cycle of parent links; CROSS JOIN makes SQLite walk the
// parent index from each session found.
const family = `WITH RECURSIVE fam(id) AS (
	SELECT ?
	UNION SELECT s.id FROM fam CROSS JOIN sessions s ON s.parent_id = fam.id WHERE s.kind = 'subagent'
)`

// Delete implements loom.Store. The locks are read in the same immediate
// transaction that deletes, so no process can take one in between.
func (s *Store) Delete(ctx context.Context, id string, opts loom.DeleteOptions) ([]*loom.Session, error) {
	var out []*loom.Session
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := s.sessionTx(ctx, tx, id); err != nil {
			return err
		}
		where := "WHERE s.id IN (SELECT id FROM fam)"
		if !opts.Purge {
			where += " AND s.deleted_at IS NULL"
		}
		fam, err := s.querySessionsWith(ctx, tx, family+` SELECT `+sessionColumns+sessionFrom+where, id)
		if err != nil {
			return fmt.Errorf("delete %s: %w", id, err)
		}
		if !opts.Force {
			if err := loom.CheckNotHeld(fam, s.owner); err != nil {
				return err
			}
		}
		if err := s.purgeTrash(ctx, tx); err != nil {
			return err
		}
		if opts.Purge {
			if _, err := tx.ExecContext(ctx, family+` DELETE FROM sessions WHERE id IN (SELECT id FROM fam)`, id); err != nil {
				return fmt.Errorf("delete %s: %w", id, err)
			}
		} else {
			now := s.now()
			if _, err := tx.ExecContext(ctx, family+` UPDATE sessions SET deleted_at = ? WHERE id IN (SELECT id FROM fam) AND deleted_at IS NULL`, id, now); err != nil {
				return fmt.Errorf("delete %s: %w", id, err)
			}
			at, _ := loom.ParseTime(now)
			for _, x := range fam {
				x.DeletedAt = &at
			}
		}
		out = loom.ArrangeFamily(loom.FamilyQuery{IDs: []string{id}, SubagentsOnly: true}, fam)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// purgeTrash removes sessions that have been in the trash longer than
// loom.TrashTTL. It runs only inside explicit delete and prune commands:
// loom never cleans up on its own.
func (s *Store) purgeTrash(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE deleted_at IS NOT NULL AND deleted_at < ?`,
		loom.FormatTime(s.Now().Add(-loom.TrashTTL)))
	if err != nil {
		return fmt.Errorf("empty trash: %w", err)
	}
	return nil
}

// Restore implements loom.Store.
func (s *Store) Restore(ctx context.Context, id string) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		x, err := s.sessionTx(ctx, tx, id)
		if err != nil {
			return err
		}
		if x.DeletedAt == nil {
			return loom.Errorf(loom.EINVALID, "session %s is not in the trash", id)
		}
		_, err = tx.ExecContext(ctx, family+` UPDATE sessions SET deleted_at = NULL WHERE id IN (SELECT id FROM fam) AND deleted_at = ?`,
			id, loom.FormatTime(*x.DeletedAt))
		if isUnique(err) {
			return loom.Errorf(loom.ECONFLICT, "cannot restore %s: another session now has its key %q", id, x.Key)
		}
		if err != nil {
			return fmt.Errorf("restore %s: %w", id, err)
		}
		return nil
	})
}

// Prune implements loom.Store: pruned sessions go to the trash, like
// deleted ones, so a prune is undone by restore for loom.TrashTTL.
func (s *Store) Prune(ctx context.Context, opts loom.PruneOptions) (*loom.PruneResult, error) {
	if opts.OlderThan < 0 {
		return nil, loom.Errorf(loom.EINVALID, "prune needs an age of zero or more")
	}
	res := &loom.PruneResult{}
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		where := []string{"s.deleted_at IS NULL", "s.kind <> 'subagent'", "s.updated_at <= ?"}
		args := []any{loom.FormatTime(s.Now().Add(-opts.OlderThan))}
		if opts.UserID != "" {
			where = append(where, "s.user_id = ?")
			args = append(args, opts.UserID)
		}
		if opts.ProjectID != "" {
			where = append(where, "s.project_id = ?")
			args = append(args, opts.ProjectID)
		}
		old, err := s.querySessions(ctx, tx, "WHERE "+strings.Join(where, " AND ")+" ORDER BY s.updated_at", args...)
		if err != nil {
			return err
		}
		for _, x := range old {
			if x.HeldElsewhere(s.owner) {
				res.Skipped = append(res.Skipped, x)
				continue
			}
			res.Removed = append(res.Removed, x)
		}
		if opts.DryRun {
			return nil
		}
		if err := s.purgeTrash(ctx, tx); err != nil {
			return err
		}
		now := s.now()
		for _, x := range res.Removed {
			if _, err := tx.ExecContext(ctx, family+` UPDATE sessions SET deleted_at = ? WHERE id IN (SELECT id FROM fam) AND deleted_at IS NULL`, x.ID, now); err != nil {
				return fmt.Errorf("prune %s: %w", x.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// queryStrings returns the one text column a query selects, row by row.
func queryStrings(ctx context.Context, db queryer, query string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
