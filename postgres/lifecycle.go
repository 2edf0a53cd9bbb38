package postgres

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
)

// newMessageID is SQL that makes a fresh UUIDv7 for a copied message from
// the original's id: the same 48-bit time (the copy keeps the original's
// created_at) and new random bits. gen_random_uuid() is a UUIDv4 whose
// text from position 16 on is three random hex digits, a dash, the RFC
// 4122 variant digit and random digits; the version digit becomes 7.
const newMessageID = `substr(m.id, 1, 14) || '7' || substr(gen_random_uuid()::text, 16)`

// Fork implements loom.Store. The copied messages share their bodies with
// the source, so a fork moves no message text and re-indexes nothing; it
// is two statements inside the database whatever the session's length.
func (s *Store) Fork(ctx context.Context, id string, opts loom.ForkOptions) (*loom.Session, error) {
	var out *loom.Session
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		// FOR SHARE waits for a message being appended to the source and
		// keeps its parts from changing until the copy is made.
		src, err := s.sessionTx(ctx, tx, id, "FOR SHARE OF s")
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
		var next *int64
		if err := tx.QueryRow(ctx, `SELECT min(seq) FROM messages WHERE session_id = $1 AND turn > $2`, src.ID, turn).Scan(&next); err != nil {
			return fmt.Errorf("fork %s: %w", src.ID, err)
		}
		if next != nil {
			last = *next - 1
		}
		// The last prompt copied, from its text parts as Append does.
		prompt := ""
		if last > 0 {
			users, err := queryMessages(ctx, tx, `WHERE m.session_id = $1 AND m.role = 'user' AND m.seq <= $2 ORDER BY m.seq DESC LIMIT 1`, src.ID, last)
			if err != nil {
				return fmt.Errorf("fork %s: %w", src.ID, err)
			}
			if len(users) == 1 {
				prompt = loom.Truncate(clean(users[0].Text()), loom.MaxPrompt)
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
				WHERE user_id = $1 AND deleted_at IS NULL AND lower(substr(title, 1, $2)) = lower($3)`,
				src.UserID, utf8.RuneCountInString(base), base)
			if err != nil {
				return fmt.Errorf("fork %s: %w", src.ID, err)
			}
			title = loom.ForkTitle(src.Title, taken)
		}
		now := ms(s.Now())
		_, err = tx.Exec(ctx, `INSERT INTO sessions (id, user_id, key, surface, title, description,
			kind, parent_id, fork_turn, project_id, project_name, project_root, cwd, model, provider,
			profile, message_count, turn_count, summary_seq, last_prompt,
			input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
			cost_usd, api_calls, compactions, created_at, updated_at)
			SELECT $1, s.user_id, $2, s.surface, $3, s.description, 'fork', s.id, $4::integer, s.project_id,
				s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile, $5::bigint, $4::integer,
				coalesce((SELECT max(seq) FROM messages WHERE session_id = s.id AND role = 'summary' AND seq <= $5::bigint), 0),
				$8, 0, 0, 0, 0, 0, 0, 0, 0, $6, $6
			FROM sessions s
			WHERE s.id = $7`,
			nid, nullString(opts.Key), title, turn, last, now, src.ID, prompt)
		if isUnique(err) {
			return loom.Errorf(loom.ECONFLICT, "a session with key %q already exists", opts.Key)
		}
		if err != nil {
			return fmt.Errorf("fork %s: %w", src.ID, err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO messages (session_id, seq, id, role, turn, body_id,
			model, provider, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
			cache_write_tokens, cost_usd, api_calls, compactions, error, created_at, completed_at)
			SELECT $1, seq, `+newMessageID+`, role, turn, body_id, model, provider, input_tokens,
				output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, cost_usd,
				api_calls, compactions, error, created_at, completed_at
			FROM messages m WHERE session_id = $2 AND seq <= $3`, nid, src.ID, last)
		if err != nil {
			return fmt.Errorf("fork %s: copy messages: %w", src.ID, err)
		}
		out, err = s.sessionTx(ctx, tx, nid, "")
		return err
	})
	return out, err
}

// family is SQL for a session ($1) and its sub-agent sessions,
// recursively.
const family = `WITH RECURSIVE fam(id) AS (
	SELECT $1::text COLLATE "C"
	UNION SELECT s.id FROM sessions s JOIN fam ON s.parent_id = fam.id WHERE s.kind = 'subagent'
)`

// Delete implements loom.Store. It takes the writer serialisation of
// every session it removes (in id order, so two deletes cannot deadlock)
// before reading their locks, so that no process takes a lock between
// the check and the delete; the row updates then wait for any message
// being appended.
func (s *Store) Delete(ctx context.Context, id string, opts loom.DeleteOptions) ([]*loom.Session, error) {
	var out []*loom.Session
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		if _, err := s.sessionTx(ctx, tx, id, ""); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, family+` SELECT pg_advisory_xact_lock(hashtextextended('loom session ' || id, 0))
			FROM (SELECT id FROM fam ORDER BY id) f`, id); err != nil {
			return fmt.Errorf("delete %s: %w", id, err)
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
			if _, err := tx.Exec(ctx, family+` DELETE FROM sessions WHERE id IN (SELECT id FROM fam)`, id); err != nil {
				return fmt.Errorf("delete %s: %w", id, err)
			}
		} else {
			now := ms(s.Now())
			if _, err := tx.Exec(ctx, family+` UPDATE sessions SET deleted_at = $2 WHERE id IN (SELECT id FROM fam) AND deleted_at IS NULL`, id, now); err != nil {
				return fmt.Errorf("delete %s: %w", id, err)
			}
			for _, x := range fam {
				x.DeletedAt = &now
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
func (s *Store) purgeTrash(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `DELETE FROM sessions WHERE deleted_at IS NOT NULL AND deleted_at < $1`,
		ms(s.Now().Add(-loom.TrashTTL)))
	if err != nil {
		return fmt.Errorf("empty trash: %w", err)
	}
	return nil
}

// Restore implements loom.Store.
func (s *Store) Restore(ctx context.Context, id string) error {
	return s.withTx(ctx, func(tx pgx.Tx) error {
		x, err := s.sessionTx(ctx, tx, id, "")
		if err != nil {
			return err
		}
		if x.DeletedAt == nil {
			return loom.Errorf(loom.EINVALID, "session %s is not in the trash", id)
		}
		_, err = tx.Exec(ctx, family+` UPDATE sessions SET deleted_at = NULL WHERE id IN (SELECT id FROM fam) AND deleted_at = $2`,
			id, *x.DeletedAt)
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
	if !storable(opts.UserID, opts.ProjectID) {
		return res, nil
	}
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		var c conds
		c.add("s.deleted_at IS NULL")
		c.add("s.kind <> 'subagent'")
		c.add("s.updated_at <= ?", ms(s.Now().Add(-opts.OlderThan)))
		if opts.UserID != "" {
			c.add("s.user_id = ?", opts.UserID)
		}
		if opts.ProjectID != "" {
			c.add("s.project_id = ?", opts.ProjectID)
		}
		old, err := s.querySessions(ctx, tx, "WHERE "+c.String()+" ORDER BY s.updated_at", c.args...)
		if err != nil {
			return err
		}
		var ids []string
		for _, x := range old {
			if x.HeldElsewhere(s.owner) {
				res.Skipped = append(res.Skipped, x)
				continue
			}
			res.Removed = append(res.Removed, x)
			ids = append(ids, x.ID)
		}
		if opts.DryRun {
			return nil
		}
		if err := s.purgeTrash(ctx, tx); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		// Every chosen session and its sub-agent sessions, in one
		// statement.
		_, err = tx.Exec(ctx, `WITH RECURSIVE fam(id) AS (
				SELECT unnest($1::text[]) COLLATE "C"
				UNION SELECT s.id FROM sessions s JOIN fam ON s.parent_id = fam.id WHERE s.kind = 'subagent'
			)
			UPDATE sessions SET deleted_at = $2 WHERE id IN (SELECT id FROM fam) AND deleted_at IS NULL`,
			ids, ms(s.Now()))
		if err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// queryStrings returns the one text column a query selects, row by row.
func queryStrings(ctx context.Context, db querier, query string, args ...any) ([]string, error) {
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
