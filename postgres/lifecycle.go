package postgres

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/query"
	"github.com/loomhq/loom/internal/rowscan"
)

// newMessageID is SQL that makes a fresh UUIDv7 for a copied message from
// the original's id: the same 48-bit time (the copy keeps the original's
// created_at) and new random bits. gen_random_uuid() is a UUIDv4 whose
// text from position 16 on is three random hex digits, a dash, the RFC
// 4122 variant digit and random digits; the version digit becomes 7.
const newMessageID = `substr(m.id, 1, 14) || '7' || substr(gen_random_uuid()::text, 16)`

// forkSessionSQL inserts a fork's session row from its source's:
// $1 id, $2 key, $3 title, $4 fork turn, $5 last seq copied, $6 now,
// $7 source id, $8 last prompt.
const forkSessionSQL = `INSERT INTO sessions (id, user_id, key, surface, title, description,
	kind, parent_id, fork_turn, project_id, project_name, project_root, cwd, model, provider,
	profile, message_count, turn_count, summary_seq, last_prompt,
	input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
	cost_usd, api_calls, compactions, created_at, updated_at, git_branch)
	SELECT $1, s.user_id, $2, s.surface, $3, s.description, 'fork', s.id, $4::integer, s.project_id,
		s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile, $5::bigint, $4::integer,
		coalesce((SELECT max(seq) FROM messages WHERE session_id = s.id AND role = 'summary' AND seq <= $5::bigint), 0),
		$8, 0, 0, 0, 0, 0, 0, 0, 0, $6, $6, s.git_branch
	FROM sessions s
	WHERE s.id = $7`

// forkMessagesSQL copies messages 1..$3 of session $2 into fork $1,
// sharing their bodies.
const forkMessagesSQL = `INSERT INTO messages (session_id, seq, id, role, turn, body_id,
	model, provider, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
	cache_write_tokens, cost_usd, api_calls, compactions, error, created_at, completed_at)
	SELECT $1, seq, ` + newMessageID + `, role, turn, body_id, model, provider, input_tokens,
		output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, cost_usd,
		api_calls, compactions, error, created_at, completed_at
	FROM messages m WHERE session_id = $2 AND seq <= $3`

// Fork implements loom.Store. The copied messages share their bodies with
// the source, so a fork moves no message text and re-indexes nothing; it
// is two statements inside the database whatever the session's length,
// sent with the read of the result in one round trip.
func (s *Store) Fork(ctx context.Context, id string, opts loom.ForkOptions) (*loom.Session, error) {
	var out *loom.Session
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		// FOR SHARE waits for a message being appended to the source and
		// keeps its parts from changing until the copy is made.
		src, err := s.sessionTx(ctx, tx, id, "FOR SHARE OF s")
		if err != nil {
			return err
		}
		plan, err := loom.PlanFork(src, opts, s.forkReads(ctx, tx, src))
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		b.Queue(forkSessionSQL, plan.ID, nullString(plan.Key), plan.Title, plan.Turn, plan.LastSeq, ms(s.Now()), src.ID, clean(plan.LastPrompt))
		b.Queue(forkMessagesSQL, plan.ID, src.ID, plan.LastSeq)
		b.Queue(`SELECT `+sessionColumns+sessionFrom+`WHERE s.id = $1`, plan.ID)
		br := tx.SendBatch(ctx, b)
		defer br.Close()
		switch _, err := br.Exec(); {
		case isUnique(err):
			return loom.Errorf(loom.ECONFLICT, "a session with key %q already exists", plan.Key)
		case err != nil:
			return fmt.Errorf("fork %s: %w", src.ID, err)
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("fork %s: copy messages: %w", src.ID, err)
		}
		if out, err = rowscan.Session(br.QueryRow(), s.live); err != nil {
			return fmt.Errorf("fork %s: %w", src.ID, err)
		}
		return br.Close()
	})
	return out, err
}

// forkReads answers a fork plan's questions about src inside tx.
func (s *Store) forkReads(ctx context.Context, tx pgx.Tx, src *loom.Session) loom.ForkReads {
	return loom.ForkReads{
		FirstSeqAfter: func(turn int) (int64, error) {
			var next *int64
			err := tx.QueryRow(ctx, `SELECT min(seq) FROM messages WHERE session_id = $1 AND turn > $2`, src.ID, turn).Scan(&next)
			if err != nil || next == nil {
				return 0, err
			}
			return *next, nil
		},
		LastUser: func(seq int64) (*loom.Message, error) {
			users, err := rowscan.Messages(ctx, rowsOf{tx}, `WHERE m.session_id = $1 AND m.role = 'user' AND m.seq <= $2 ORDER BY m.seq DESC LIMIT 1`, src.ID, seq)
			if len(users) == 0 {
				return nil, err
			}
			return users[0], err
		},
		TitlesLike: func(base string) ([]string, error) {
			return rowscan.All(ctx, rowsOf{tx}, rowscan.String, `SELECT title FROM sessions
				WHERE user_id = $1 AND deleted_at IS NULL AND lower(substr(title, 1, $2)) = lower($3)`,
				src.UserID, utf8.RuneCountInString(base), base)
		},
	}
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
		trashed := " AND s.deleted_at IS NULL"
		if opts.Purge {
			trashed = ""
		}
		var err error
		out, err = loom.DeleteWith(id, opts, s.holder.Owner, s.Now(), loom.DeleteSteps{
			Family: func() ([]*loom.Session, error) {
				return s.querySessionsWith(ctx, tx, family+` SELECT `+sessionColumns+sessionFrom+`WHERE s.id IN (SELECT id FROM fam)`+trashed, id)
			},
			EmptyTrash: func() error { return s.purgeTrash(ctx, tx) },
			Purge: func() error {
				_, err := tx.Exec(ctx, family+` DELETE FROM sessions WHERE id IN (SELECT id FROM fam)`, id)
				return err
			},
			Trash: func(at time.Time) error {
				_, err := tx.Exec(ctx, family+` UPDATE sessions SET deleted_at = $2 WHERE id IN (SELECT id FROM fam) AND deleted_at IS NULL`, id, at)
				return err
			},
		})
		return err
	})
	return out, err
}

// purgeTrash removes sessions that have been in the trash longer than
// loom.TrashTTL. It runs only inside explicit delete and prune commands:
// loom never cleans up on its own.
func (s *Store) purgeTrash(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `DELETE FROM sessions WHERE deleted_at IS NOT NULL AND deleted_at < $1`, ms(loom.TrashedBefore(s.Now())))
	return err
}

// Restore implements loom.Store.
func (s *Store) Restore(ctx context.Context, id string) error {
	return s.withTx(ctx, func(tx pgx.Tx) error {
		x, err := s.sessionTx(ctx, tx, id, "")
		if err != nil {
			return err
		}
		return loom.RestoreWith(x, func(at time.Time) (bool, error) {
			_, err := tx.Exec(ctx, family+` UPDATE sessions SET deleted_at = NULL WHERE id IN (SELECT id FROM fam) AND deleted_at = $2`, id, at)
			return isUnique(err), err
		})
	})
}

// Prune implements loom.Store. The sessions chosen go to the trash with
// their sub-agent sessions in one statement.
func (s *Store) Prune(ctx context.Context, opts loom.PruneOptions) (*loom.PruneResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if !storable(opts.UserID, opts.ProjectID) {
		return &loom.PruneResult{}, nil
	}
	var res *loom.PruneResult
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		now := s.Now()
		steps := loom.PruneSteps{
			Select: func() ([]*loom.Session, error) {
				w := query.Prune(dialect, opts, now)
				return s.querySessions(ctx, tx, "WHERE "+w.String()+" ORDER BY s.updated_at", w.Args...)
			},
			EmptyTrash: func() error { return s.purgeTrash(ctx, tx) },
			Trash: func(sessions []*loom.Session, at time.Time) error {
				ids := make([]string, len(sessions))
				for i, x := range sessions {
					ids[i] = x.ID
				}
				_, err := tx.Exec(ctx, `WITH RECURSIVE fam(id) AS (
						SELECT unnest($1::text[]) COLLATE "C"
						UNION SELECT s.id FROM sessions s JOIN fam ON s.parent_id = fam.id WHERE s.kind = 'subagent'
					)
					UPDATE sessions SET deleted_at = $2 WHERE id IN (SELECT id FROM fam) AND deleted_at IS NULL`, ids, at)
				return err
			},
		}
		var err error
		res, err = loom.PruneWith(opts, s.holder.Owner, now, steps)
		return err
	})
	return res, err
}
