package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// forkSessionSQL inserts a fork's session row from its source's:
// $1 id, $2 key, $3 title, $4 fork turn, $5 last seq inherited, $6 now,
// $7 source id, $8 last prompt, $9 latest summary.
const forkSessionSQL = `INSERT INTO sessions (id, user_id, key, surface, title, description,
	kind, parent_id, fork_turn, project_id, project_name, project_root, cwd, model, provider,
	profile, message_count, turn_count, summary_seq, last_prompt,
	input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
	cost_usd, api_calls, compactions, created_at, updated_at, git_branch)
	SELECT $1, s.user_id, $2, s.surface, $3, s.description, 'fork', s.id, $4::integer, s.project_id,
		s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile, $5::bigint, $4::integer,
		$9::bigint, $8, 0, 0, 0, 0, 0, 0, 0, 0, $6, $6, s.git_branch
	FROM sessions s
	WHERE s.id = $7`

// Fork implements loom.Store. The fork copies no message: it reads the
// messages it inherits from the source's rows, through the source's
// spans (sqlstore.InheritSpans), so forking writes one session row and a
// span for each store the history lies in, whatever its length; the
// statements go with the read of the result in one round trip.
func (s *Store) Fork(ctx context.Context, id string, opts loom.ForkOptions) (*loom.Session, error) {
	var out *loom.Session
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		// FOR SHARE waits for a message being appended to the source and
		// keeps its parts and spans from changing until the fork is made.
		src, err := s.sessionTx(ctx, tx, id, "FOR SHARE OF s")
		if err != nil {
			return err
		}
		plan, err := sqlstore.PlanFork(src, opts, s.forkReads(ctx, tx, src))
		if err != nil {
			return err
		}
		spans, err := readSpans(ctx, tx, src.ID)
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		b.Queue(forkSessionSQL, plan.ID, nullString(plan.Key), plan.Title, plan.Turn, plan.LastSeq, ms(s.Now()), src.ID, clean(plan.LastPrompt), plan.SummarySeq)
		queueSpans(b, plan.ID, sqlstore.InheritSpans(spans, plan.LastSeq, plan.ID))
		b.Queue(`SELECT `+sessionColumns+sessionFrom+`WHERE s.id = $1`, plan.ID)
		spanStatements := b.Len() - 2 // all but the session's insert and read
		br := tx.SendBatch(ctx, b)
		defer br.Close()
		switch _, err := br.Exec(); {
		case isUnique(err):
			return loom.Errorf(loom.ECONFLICT, "a session with key %q already exists", plan.Key)
		case err != nil:
			return fmt.Errorf("fork %s: %w", src.ID, err)
		}
		for range spanStatements {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("fork %s: spans: %w", src.ID, err)
			}
		}
		if out, err = rowscan.Session(br.QueryRow(), s.live); err != nil {
			return fmt.Errorf("fork %s: %w", src.ID, err)
		}
		return br.Close()
	})
	return out, err
}

// forkReads answers a fork plan's questions about src inside tx, each
// with a seek or two through src's spans.
func (s *Store) forkReads(ctx context.Context, tx pgx.Tx, src *loom.Session) sqlstore.ForkReads {
	return sqlstore.ForkReads{
		TurnFrom: func(seq int64) (int, bool, error) {
			var turn int
			err := tx.QueryRow(ctx, `SELECT m.turn FROM spans sp CROSS JOIN LATERAL (SELECT m.turn, m.seq FROM messages m
				WHERE m.session_id = sp.store_id AND m.seq BETWEEN greatest(sp.first_seq, $1) AND sp.last_seq
				ORDER BY m.seq LIMIT 1) m
				WHERE sp.session_id = $2 ORDER BY m.seq LIMIT 1`, seq, src.ID).Scan(&turn)
			if errors.Is(err, pgx.ErrNoRows) {
				return 0, false, nil
			}
			if err != nil {
				return 0, false, fmt.Errorf("fork %s: %w", src.ID, err)
			}
			return turn, true, nil
		},
		LastUser: func(seq int64) (*loom.Message, error) {
			users, err := spanMessages(ctx, tx, src.ID, 1, seq, " AND m.role = 'user'", 1, false)
			if err != nil || len(users) == 0 {
				return nil, err
			}
			return users[0], nil
		},
		LastSummary: func(seq int64) (int64, error) {
			var last *int64
			err := tx.QueryRow(ctx, `SELECT max(m.seq) FROM spans sp JOIN messages m ON m.session_id = sp.store_id
				AND m.seq BETWEEN sp.first_seq AND least(sp.last_seq, $1) AND m.role = 'summary'
				WHERE sp.session_id = $2`, seq, src.ID).Scan(&last)
			if err != nil || last == nil {
				return 0, err
			}
			return *last, nil
		},
		Usage: func(from, to int64) (loom.Usage, error) {
			var u loom.Usage
			err := tx.QueryRow(ctx, `SELECT `+query.UsageTotals("m.")+` FROM spans sp JOIN messages m ON m.session_id = sp.store_id
				AND m.seq BETWEEN greatest(sp.first_seq, $1) AND least(sp.last_seq, $2)
				WHERE sp.session_id = $3`, from, to, src.ID).Scan(&u.InputTokens, &u.OutputTokens, &u.ReasoningTokens,
				&u.CacheReadTokens, &u.CacheWriteTokens, &u.CostUSD, &u.APICalls, &u.Compactions)
			if err != nil {
				return u, fmt.Errorf("fork %s: usage: %w", src.ID, err)
			}
			return u, nil
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
		out, err = sqlstore.DeleteWith(id, opts, s.holder.Owner, s.Now(), sqlstore.DeleteSteps{
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
	_, err := tx.Exec(ctx, `DELETE FROM sessions WHERE deleted_at IS NOT NULL AND deleted_at < $1`, ms(sqlstore.TrashedBefore(s.Now())))
	return err
}

// Restore implements loom.Store.
func (s *Store) Restore(ctx context.Context, id string) error {
	return s.withTx(ctx, func(tx pgx.Tx) error {
		x, err := s.sessionTx(ctx, tx, id, "")
		if err != nil {
			return err
		}
		return sqlstore.RestoreWith(x, func(at time.Time) (bool, error) {
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
		steps := sqlstore.PruneSteps{
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
		res, err = sqlstore.PruneWith(opts, s.holder.Owner, now, steps)
		return err
	})
	return res, err
}
