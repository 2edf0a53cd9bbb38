package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom/sessionstore"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// Session implements sessionstore.SessionSteps.
func (w writes) Session(ctx context.Context, id string) (*loom.Session, error) {
	return w.s.sessionTx(ctx, w, id)
}

// SessionForWrite implements sessionstore.SessionSteps. The transaction is immediate:
// it holds SQLite's one write lock, so the row needs no lock of its own.
func (w writes) SessionForWrite(ctx context.Context, id string) (*loom.Session, error) {
	x, err := w.s.sessionTx(ctx, w, id)
	if loom.ErrorCode(err) == loom.ENOTFOUND {
		return nil, nil
	}
	return x, err
}

// ForkSource implements sessionstore.ForkSteps. The transaction is
// immediate: nothing else writes the source until it ends.
func (w writes) ForkSource(ctx context.Context, id string) (*loom.Session, error) {
	return w.s.sessionTx(ctx, w, id)
}

// RecordFiles implements sessionstore.ImportSteps.
func (w writes) RecordFiles(ctx context.Context, files []loom.ImportedFile) error {
	return w.s.recordFiles(ctx, w.tx, files)
}

// CheckWriter implements sessionstore.LockTx.
func (w writes) CheckWriter(ctx context.Context, id string) error {
	return w.s.checkWriter(ctx, w.tx, id)
}

// CreateSession implements sessionstore.SessionSteps.
func (w writes) CreateSession(ctx context.Context, row *loom.Session) error {
	tool, version, path := sqlstore.SourceColumns(row)
	_, err := w.ExecContext(ctx, `INSERT INTO sessions (id, user_id, key, surface, title,
		description, kind, parent_id, fork_turn, project_id, project_name, project_root, cwd,
		model, provider, profile, created_at, updated_at, git_branch, source_tool, source_version,
		source_path, team, member)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		row.ID, row.UserID, nullString(row.Key), row.Surface, row.Title, row.Description, row.Kind,
		nullString(row.ParentID), row.ForkTurn, row.Project.ID, row.Project.Name, row.Project.Root, row.Cwd,
		row.Model, row.Provider, row.Profile, loom.FormatTime(row.CreatedAt), loom.FormatTime(row.UpdatedAt),
		row.GitBranch, tool, version, path, row.Team, row.Member)
	if isUnique(err) {
		return loom.Errorf(loom.ECONFLICT, "a session with key %q already exists", row.Key)
	}
	if err != nil {
		return fmt.Errorf("create session %s: %w", row.ID, err)
	}
	return nil
}

// StoreAppend implements sessionstore.SessionSteps.
func (w writes) StoreAppend(ctx context.Context, cur *loom.Session, msgs []*loom.Message) error {
	store, err := ownStore(ctx, w, cur.ID)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := insertMessage(ctx, w, store, m); err != nil {
			return err
		}
	}
	u := cur.Usage
	_, err = w.ExecContext(ctx, appendUpdateSQL,
		cur.MessageCount, cur.TurnCount, cur.LastPrompt, cur.Title, cur.SummarySeq,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens,
		u.CacheWriteTokens, u.CacheWrite1hTokens, u.CostUSD, u.APICalls, u.Compactions, loom.FormatTime(cur.UpdatedAt), cur.ID)
	return err
}

// family is SQL for a session and its sub-agent sessions, recursively.
// UNION ends a cycle of parent links; CROSS JOIN makes SQLite walk the
// parent index from each session found.
const family = `WITH RECURSIVE fam(id) AS (
	SELECT ?
	UNION SELECT s.id FROM fam CROSS JOIN sessions s ON s.parent_id = fam.id WHERE s.kind = 'subagent'
)`

// Family implements sessionstore.TrashSteps. The transaction holds the write lock,
// so no lock row changes until it ends.
func (w writes) Family(ctx context.Context, id string, trashed bool) ([]*loom.Session, error) {
	where := "WHERE s.id IN (SELECT id FROM fam)"
	if !trashed {
		where += " AND s.deleted_at IS NULL"
	}
	return w.s.querySessionsWith(ctx, w, family+` SELECT `+rowscan.SessionColumns+rowscan.SessionFrom+where, id)
}

// Prunable implements sessionstore.TrashSteps.
func (w writes) Prunable(ctx context.Context, opts loom.PruneOptions, now time.Time) ([]*loom.Session, error) {
	c := query.Prune(dialect, opts, now)
	return w.s.querySessions(ctx, w, "WHERE "+c.String()+" ORDER BY s.updated_at", c.Args...)
}

// EmptyTrash implements sessionstore.TrashSteps. It runs only inside explicit
// delete and prune commands: loom never cleans up on its own.
func (w writes) EmptyTrash(ctx context.Context, before time.Time) ([]string, error) {
	return rowscan.All(ctx, rowsOf{w}, rowscan.String,
		`DELETE FROM sessions WHERE deleted_at IS NOT NULL AND deleted_at < ? RETURNING id`, loom.FormatTime(before))
}

// Purge implements sessionstore.TrashSteps.
func (w writes) Purge(ctx context.Context, id string) error {
	_, err := w.ExecContext(ctx, family+` DELETE FROM sessions WHERE id IN (SELECT id FROM fam)`, id)
	return err
}

// Trash implements sessionstore.TrashSteps.
func (w writes) Trash(ctx context.Context, ids []string, at time.Time) ([]string, error) {
	var out []string
	for _, id := range ids {
		moved, err := rowscan.All(ctx, rowsOf{w}, rowscan.String,
			family+` UPDATE sessions SET deleted_at = ? WHERE id IN (SELECT id FROM fam) AND deleted_at IS NULL RETURNING id`,
			id, loom.FormatTime(at))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		out = append(out, moved...)
	}
	return out, nil
}

// Untrash implements sessionstore.TrashSteps.
func (w writes) Untrash(ctx context.Context, id string, at time.Time) ([]string, bool, error) {
	restored, err := rowscan.All(ctx, rowsOf{w}, rowscan.String,
		family+` UPDATE sessions SET deleted_at = NULL WHERE id IN (SELECT id FROM fam) AND deleted_at = ? RETURNING id`,
		id, loom.FormatTime(at))
	return restored, isUnique(err), err
}

// TurnFrom implements sessionstore.ForkReads.
func (w writes) TurnFrom(ctx context.Context, src string, seq int64) (int, bool, error) {
	var turn int
	err := w.QueryRowContext(ctx, turnFromSQL, seq, src).Scan(&turn)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("fork %s: %w", src, err)
	}
	return turn, true, nil
}

// LastUser implements sessionstore.ForkReads.
func (w writes) LastUser(ctx context.Context, src string, seq int64) (*loom.Message, error) {
	users, err := spanMessages(ctx, w, src, 1, seq, lastUserCond, true, 1)
	if err != nil || len(users) == 0 {
		return nil, err
	}
	return users[0], nil
}

// LastSummary implements sessionstore.ForkReads.
func (w writes) LastSummary(ctx context.Context, src string, seq int64) (int64, error) {
	var last int64
	err := w.QueryRowContext(ctx, lastSummarySQL, seq, src).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("fork %s: %w", src, err)
	}
	return last, nil
}

// UsageOf implements sessionstore.ForkReads.
func (w writes) UsageOf(ctx context.Context, src string, from, to int64) (loom.Usage, error) {
	u, err := rowscan.Usage(w.QueryRowContext(ctx, usageSQL, from, to, src))
	if err != nil {
		return u, fmt.Errorf("fork %s: usage: %w", src, err)
	}
	return u, nil
}

// TitlesLike implements sessionstore.ForkReads.
func (w writes) TitlesLike(ctx context.Context, user, base string) ([]string, error) {
	return rowscan.All(ctx, rowsOf{w}, rowscan.String, titlesLikeSQL, user, utf8.RuneCountInString(base), base)
}

// CreateFork implements sessionstore.ForkSteps.
func (w writes) CreateFork(ctx context.Context, src *loom.Session, plan *sessionstore.ForkPlan, spans []span.Span) (*loom.Session, error) {
	now := w.s.now()
	_, err := w.ExecContext(ctx, forkSessionSQL,
		plan.ID, nullString(plan.Key), plan.Title, plan.Turn, plan.LastSeq, plan.Turn, plan.SummarySeq, plan.LastPrompt, now, now, src.ID)
	if isUnique(err) {
		return nil, loom.Errorf(loom.ECONFLICT, "a session with key %q already exists", plan.Key)
	}
	if err != nil {
		return nil, fmt.Errorf("fork %s: %w", src.ID, err)
	}
	if err := writeSpans(ctx, w, plan.ID, spans); err != nil {
		return nil, err
	}
	return w.s.sessionTx(ctx, w, plan.ID)
}

// StoreRewind implements sessionstore.ForkSteps.
func (w writes) StoreRewind(ctx context.Context, src *loom.Session, plan *sessionstore.RewindPlan, forkSpans, keepSpans []span.Span) (*loom.Session, error) {
	f, fu := plan.Fork, plan.ForkUsage
	now := loom.FormatTime(plan.At)
	if _, err := w.ExecContext(ctx, rewindForkSQL, f.ID, f.Title, f.Turn, now, src.ID,
		fu.InputTokens, fu.OutputTokens, fu.ReasoningTokens, fu.CacheReadTokens, fu.CacheWriteTokens,
		fu.CostUSD, fu.APICalls, fu.Compactions, fu.CacheWrite1hTokens); err != nil {
		return nil, fmt.Errorf("rewind %s: %w", src.ID, err)
	}
	if err := writeSpans(ctx, w, f.ID, forkSpans); err != nil {
		return nil, err
	}
	if err := writeSpans(ctx, w, src.ID, keepSpans); err != nil {
		return nil, err
	}
	u := plan.KeepUsage
	if _, err := w.ExecContext(ctx, rewindKeepSQL, src.ID, plan.KeepSeq, f.Turn, plan.KeepPrompt, plan.KeepSummarySeq,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens,
		u.CostUSD, u.APICalls, u.Compactions, now, u.CacheWrite1hTokens); err != nil {
		return nil, fmt.Errorf("rewind %s: %w", src.ID, err)
	}
	return w.s.sessionTx(ctx, w, f.ID)
}

// Spans implements sessionstore.BodySteps.
func (w writes) Spans(ctx context.Context, id string) ([]span.Span, error) {
	return readSpans(ctx, w, id)
}

// WriteSpans implements sessionstore.BodySteps.
func (w writes) WriteSpans(ctx context.Context, id string, spans []span.Span) error {
	return writeSpans(ctx, w, id, spans)
}

// Readers implements sessionstore.BodySteps.
func (w writes) Readers(ctx context.Context, store string, seq int64, id string) ([]string, error) {
	return rowscan.All(ctx, rowsOf{w}, rowscan.String, `SELECT DISTINCT session_id FROM spans
		WHERE store_id = ?1 AND first_seq <= ?2 AND last_seq >= ?2 AND session_id <> ?3`, store, seq, id)
}

// newBody stores b as a body row of its own and returns its id.
func (w writes) newBody(ctx context.Context, b sqlstore.Body) (int64, error) {
	res, err := w.ExecContext(ctx, insertBodySQL, b.Parts, b.Text)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// CopyRow implements sessionstore.BodySteps.
func (w writes) CopyRow(ctx context.Context, to, from string, seq int64, b *sqlstore.Body) error {
	var body any
	if b != nil {
		id, err := w.newBody(ctx, *b)
		if err != nil {
			return err
		}
		body = id
	}
	_, err := w.ExecContext(ctx, copyRowSQL, to, body, from, seq)
	return err
}

// DropUnread implements sessionstore.BodySteps: the row goes with its body and
// search entry, by trigger.
func (w writes) DropUnread(ctx context.Context, store string, seq int64) error {
	_, err := w.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ?1 AND seq = ?2
		AND NOT EXISTS (SELECT 1 FROM spans WHERE store_id = ?1 AND first_seq <= ?2 AND last_seq >= ?2)`, store, seq)
	if err != nil {
		return fmt.Errorf("update message %d: %w", seq, err)
	}
	return nil
}

// Rewrite implements sessionstore.BodySteps.
func (w writes) Rewrite(ctx context.Context, store string, seq int64, b sqlstore.Body) error {
	var body int64
	var shared bool
	if err := w.QueryRowContext(ctx, `SELECT body_id, EXISTS (SELECT 1 FROM messages o WHERE o.body_id = m.body_id AND (o.session_id <> m.session_id OR o.seq <> m.seq))
		FROM messages m WHERE session_id = ? AND seq = ?`, store, seq).Scan(&body, &shared); err != nil {
		return err
	}
	if !shared {
		_, err := w.ExecContext(ctx, `UPDATE bodies SET parts = ?, content = ? WHERE id = ?`, b.Parts, b.Text, body)
		return err
	}
	nb, err := w.newBody(ctx, b)
	if err != nil {
		return err
	}
	_, err = w.ExecContext(ctx, `UPDATE messages SET body_id = ? WHERE session_id = ? AND seq = ?`, nb, store, seq)
	return err
}
