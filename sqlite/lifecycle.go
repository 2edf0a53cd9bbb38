package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// Fork implements loom.Store. The fork copies no message: it reads the
// messages it inherits from the source's rows, through the source's
// spans (sqlstore.InheritSpans), so forking writes one session row and a
// span for each store the history lies in, whatever its length.
func (s *Store) Fork(ctx context.Context, id string, opts loom.ForkOptions) (*loom.Session, error) {
	s.prepareWrites(ctx, &s.fonce, forkWrites)
	var out *loom.Session
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		w := writes{s, tx}
		src, err := s.sessionTx(ctx, w, id)
		if err != nil {
			return err
		}
		plan, err := sqlstore.PlanFork(src, opts, s.forkReads(ctx, w, src))
		if err != nil {
			return err
		}
		now := s.now()
		_, err = w.ExecContext(ctx, forkSessionSQL,
			plan.ID, nullString(plan.Key), plan.Title, plan.Turn, plan.LastSeq, plan.Turn, plan.SummarySeq, plan.LastPrompt, now, now, src.ID)
		if isUnique(err) {
			return loom.Errorf(loom.ECONFLICT, "a session with key %q already exists", plan.Key)
		}
		if err != nil {
			return fmt.Errorf("fork %s: %w", src.ID, err)
		}
		spans, err := readSpans(ctx, w, src.ID)
		if err != nil {
			return err
		}
		if err := writeSpans(ctx, w, plan.ID, sqlstore.InheritSpans(spans, plan.LastSeq, plan.ID)); err != nil {
			return err
		}
		out, err = s.sessionTx(ctx, w, plan.ID)
		return err
	})
	return out, err
}

// The statements of a fork, and of its plan's reads (forkReads).
const (
	forkSessionSQL = `INSERT INTO sessions (id, user_id, key, surface, title, description,
	kind, parent_id, fork_turn, project_id, project_name, project_root, cwd, model, provider,
	profile, message_count, turn_count, summary_seq, last_prompt,
	input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
	cost_usd, api_calls, compactions, created_at, updated_at, git_branch)
	SELECT ?, s.user_id, ?, s.surface, ?, s.description, 'fork', s.id, ?, s.project_id,
		s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile, ?, ?, ?, ?,
		0, 0, 0, 0, 0, 0, 0, 0, ?, ?, s.git_branch
	FROM sessions s
	WHERE s.id = ?`
	turnFromSQL = `SELECT m.turn FROM spans sp CROSS JOIN messages m ON m.session_id = sp.store_id
	AND m.seq BETWEEN max(sp.first_seq, ?) AND sp.last_seq
	WHERE sp.session_id = CAST(? AS TEXT)` + spanOrder + ` LIMIT 1`
	lastUserCond   = ` AND m.role = 'user'`
	lastSummarySQL = `SELECT m.seq FROM spans sp CROSS JOIN messages m ON m.session_id = sp.store_id
	AND m.seq BETWEEN sp.first_seq AND min(sp.last_seq, ?)
	WHERE sp.session_id = CAST(? AS TEXT) AND m.role = 'summary'` + spanOrderDesc + ` LIMIT 1`
	// titlesLikeSQL finds the titles that start with ?3 by a range on
	// sessions_title, without reading the user's other sessions (10 ms
	// among 10,000): NOCASE folds ASCII as lower does, and U+10FFFF
	// sorts after anything that can follow ?3.
	titlesLikeSQL = `SELECT title FROM sessions
	WHERE user_id = ?1 AND title >= ?3 COLLATE NOCASE AND title < ?3 || char(1114111) COLLATE NOCASE
	AND deleted_at IS NULL AND lower(substr(title, 1, ?2)) = lower(?3)`
)

// usageSQL is the usage of session ?3's messages ?1 to ?2.
var usageSQL = `SELECT ` + query.UsageTotals("m.") + ` FROM spans sp CROSS JOIN messages m ON m.session_id = sp.store_id
	AND m.seq BETWEEN max(sp.first_seq, ?) AND min(sp.last_seq, ?)
	WHERE sp.session_id = CAST(? AS TEXT)`

// forkWrites are the statements of forks and rewinds, prepared before
// the first fork or rewind (parsing them cost more than running them),
// not before every process's first write: 0.4–0.6 ms, five times the
// append's own statements.
var forkWrites = []string{forkSessionSQL, turnFromSQL, spanQuery(lastUserCond, true, true), lastSummarySQL,
	usageSQL, titlesLikeSQL, readSpansSQL, deleteSpansSQL, insertSpanSQL, rewindForkSQL, rewindKeepSQL}

// forkReads answers a fork plan's questions about src inside a write
// transaction, each with a seek or two through src's spans.
func (s *Store) forkReads(ctx context.Context, w writes, src *loom.Session) sqlstore.ForkReads {
	return sqlstore.ForkReads{
		TurnFrom: func(seq int64) (int, bool, error) {
			var turn int
			err := w.QueryRowContext(ctx, turnFromSQL, seq, src.ID).Scan(&turn)
			if errors.Is(err, sql.ErrNoRows) {
				return 0, false, nil
			}
			if err != nil {
				return 0, false, fmt.Errorf("fork %s: %w", src.ID, err)
			}
			return turn, true, nil
		},
		LastUser: func(seq int64) (*loom.Message, error) {
			users, err := spanMessages(ctx, w, src.ID, 1, seq, lastUserCond, true, 1)
			if err != nil || len(users) == 0 {
				return nil, err
			}
			return users[0], nil
		},
		LastSummary: func(seq int64) (int64, error) {
			var last int64
			err := w.QueryRowContext(ctx, lastSummarySQL, seq, src.ID).Scan(&last)
			if errors.Is(err, sql.ErrNoRows) {
				return 0, nil
			}
			if err != nil {
				return 0, fmt.Errorf("fork %s: %w", src.ID, err)
			}
			return last, nil
		},
		Usage: func(from, to int64) (loom.Usage, error) {
			var u loom.Usage
			err := w.QueryRowContext(ctx, usageSQL, from, to, src.ID).Scan(&u.InputTokens, &u.OutputTokens, &u.ReasoningTokens,
				&u.CacheReadTokens, &u.CacheWriteTokens, &u.CostUSD, &u.APICalls, &u.Compactions)
			if err != nil {
				return u, fmt.Errorf("fork %s: usage: %w", src.ID, err)
			}
			return u, nil
		},
		TitlesLike: func(base string) ([]string, error) {
			return rowscan.All(ctx, rowsOf{w}, rowscan.String, titlesLikeSQL, src.UserID, utf8.RuneCountInString(base), base)
		},
	}
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
		var err error
		out, err = sqlstore.DeleteWith(id, opts, s.holder.Owner, s.Now(), sqlstore.DeleteSteps{
			Family: func() ([]*loom.Session, error) {
				where := "WHERE s.id IN (SELECT id FROM fam)"
				if !opts.Purge {
					where += " AND s.deleted_at IS NULL"
				}
				return s.querySessionsWith(ctx, tx, family+` SELECT `+sessionColumns+sessionFrom+where, id)
			},
			EmptyTrash: func() error { return s.purgeTrash(ctx, tx) },
			Purge: func() error {
				_, err := tx.ExecContext(ctx, family+` DELETE FROM sessions WHERE id IN (SELECT id FROM fam)`, id)
				return err
			},
			Trash: func(at time.Time) error {
				_, err := tx.ExecContext(ctx, family+` UPDATE sessions SET deleted_at = ? WHERE id IN (SELECT id FROM fam) AND deleted_at IS NULL`,
					id, loom.FormatTime(at))
				return err
			},
		})
		return err
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
		loom.FormatTime(sqlstore.TrashedBefore(s.Now())))
	return err
}

// Restore implements loom.Store.
func (s *Store) Restore(ctx context.Context, id string) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		x, err := s.sessionTx(ctx, tx, id)
		if err != nil {
			return err
		}
		return sqlstore.RestoreWith(x, func(at time.Time) (bool, error) {
			_, err := tx.ExecContext(ctx, family+` UPDATE sessions SET deleted_at = NULL WHERE id IN (SELECT id FROM fam) AND deleted_at = ?`,
				id, loom.FormatTime(at))
			return isUnique(err), err
		})
	})
}

// Prune implements loom.Store.
func (s *Store) Prune(ctx context.Context, opts loom.PruneOptions) (*loom.PruneResult, error) {
	var res *loom.PruneResult
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		now := s.Now()
		var err error
		res, err = sqlstore.PruneWith(opts, s.holder.Owner, now, sqlstore.PruneSteps{
			Select: func() ([]*loom.Session, error) {
				w := query.Prune(dialect, opts, now)
				return s.querySessions(ctx, tx, "WHERE "+w.String()+" ORDER BY s.updated_at", w.Args...)
			},
			EmptyTrash: func() error { return s.purgeTrash(ctx, tx) },
			Trash: func(sessions []*loom.Session, at time.Time) error {
				for _, x := range sessions {
					if _, err := tx.ExecContext(ctx, family+` UPDATE sessions SET deleted_at = ? WHERE id IN (SELECT id FROM fam) AND deleted_at IS NULL`,
						x.ID, loom.FormatTime(at)); err != nil {
						return fmt.Errorf("%s: %w", x.ID, err)
					}
				}
				return nil
			},
		})
		return err
	})
	return res, err
}
