package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom/sessionstore"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// writeTx is a transaction as sessionstore's rules take it: each of
// their steps in PostgreSQL's SQL, the coarse ones in one round trip.
type writeTx struct {
	s  *Store
	tx pgx.Tx
	// ctx is the context the transaction began in.
	ctx context.Context
	// held is the live lock another handle holds on session heldID, as
	// SessionForWrite found it: CheckWriter asks it again.
	heldID string
	held   *loom.Lock
}

// Session implements sessionstore.SessionSteps.
func (w *writeTx) Session(ctx context.Context, id string) (*loom.Session, error) {
	return w.s.sessionTx(ctx, w.tx, id, "")
}

// SessionForWrite implements sessionstore.SessionSteps with beginWrite: the
// session's writers are serialised and its row locked until the
// transaction ends.
func (w *writeTx) SessionForWrite(ctx context.Context, id string) (*loom.Session, error) {
	if !storable(id) {
		return nil, nil
	}
	st, err := w.s.beginWrite(ctx, w.tx, id)
	if err != nil {
		return nil, err
	}
	w.heldID, w.held = id, st.holder
	return st.cur, nil
}

// CheckWriter implements sessionstore.LockTx.
func (w *writeTx) CheckWriter(ctx context.Context, id string) error {
	if w.heldID != id {
		if _, err := w.SessionForWrite(ctx, id); err != nil {
			return err
		}
	}
	return writeState{holder: w.held}.check(id)
}

// CreateSession implements sessionstore.SessionSteps.
func (w *writeTx) CreateSession(ctx context.Context, row *loom.Session) error {
	tool, version, path := sqlstore.SourceColumns(row)
	_, err := w.tx.Exec(ctx, `INSERT INTO sessions (id, user_id, key, surface, title,
		description, kind, parent_id, fork_turn, project_id, project_name, project_root, cwd,
		model, provider, profile, created_at, updated_at, git_branch, source_tool, source_version,
		source_path, team, member)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
			$19, $20, $21, $22, $23, $24)
		ON CONFLICT (id) DO NOTHING`,
		row.ID, row.UserID, nullString(row.Key), row.Surface, row.Title, row.Description, row.Kind,
		nullString(row.ParentID), row.ForkTurn, row.Project.ID, row.Project.Name, row.Project.Root, row.Cwd,
		row.Model, row.Provider, row.Profile, ms(row.CreatedAt), ms(row.UpdatedAt),
		clean(row.GitBranch), clean(tool), clean(version), clean(path), clean(row.Team), clean(row.Member))
	if isUnique(err) {
		return loom.Errorf(loom.ECONFLICT, "a session with key %q already exists", row.Key)
	}
	if err != nil {
		return fmt.Errorf("create session %s: %w", row.ID, err)
	}
	return nil
}

// StoreAppend implements sessionstore.SessionSteps in one round trip.
func (w *writeTx) StoreAppend(ctx context.Context, cur *loom.Session, msgs []*loom.Message) error {
	cur.LastPrompt = clean(cur.LastPrompt)
	b := &pgx.Batch{}
	for _, m := range msgs {
		args, err := messageArgs(m)
		if err != nil {
			return err
		}
		b.Queue(insertMessageSQL, args...)
	}
	u := cur.Usage
	b.Queue(`UPDATE sessions SET message_count = $1, turn_count = $2, last_prompt = $3, title = $4,
		summary_seq = $5, input_tokens = $6, output_tokens = $7, reasoning_tokens = $8,
		cache_read_tokens = $9, cache_write_tokens = $10, cost_usd = $11, api_calls = $12,
		compactions = $13, updated_at = $14, archived_at = NULL, cache_write_1h_tokens = $16 WHERE id = $15`,
		cur.MessageCount, cur.TurnCount, cur.LastPrompt, cur.Title, cur.SummarySeq,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens,
		u.CacheWriteTokens, u.CostUSD, u.APICalls, u.Compactions, ms(cur.UpdatedAt), cur.ID, u.CacheWrite1hTokens)
	return w.tx.SendBatch(ctx, b).Close()
}

// family is SQL for a session ($1) and its sub-agent sessions,
// recursively.
const family = `WITH RECURSIVE fam(id) AS (
	SELECT $1::text COLLATE "C"
	UNION SELECT s.id FROM sessions s JOIN fam ON s.parent_id = fam.id WHERE s.kind = 'subagent'
)`

// Family implements sessionstore.TrashSteps. It takes the writer serialisation of
// every session of the family (in id order, so two deletes cannot
// deadlock) before reading their locks, so that no process takes a lock
// between the check and the removal; the row updates then wait for any
// message being appended.
func (w *writeTx) Family(ctx context.Context, id string, trashed bool) ([]*loom.Session, error) {
	if _, err := w.tx.Exec(ctx, family+` SELECT pg_advisory_xact_lock(hashtextextended('loom session ' || id, 0))
		FROM (SELECT id FROM fam ORDER BY id) f`, id); err != nil {
		return nil, err
	}
	where := `WHERE s.id IN (SELECT id FROM fam)`
	if !trashed {
		where += ` AND s.deleted_at IS NULL`
	}
	return w.s.querySessionsWith(ctx, w.tx, family+` SELECT `+rowscan.SessionColumns+rowscan.SessionFrom+where, id)
}

// Prunable implements sessionstore.TrashSteps.
func (w *writeTx) Prunable(ctx context.Context, opts loom.PruneOptions, now time.Time) ([]*loom.Session, error) {
	if !storable(opts.UserID, opts.ProjectID) {
		return nil, nil // no session has such a user or project
	}
	c := query.Prune(dialect, opts, now)
	return w.s.querySessions(ctx, w.tx, "WHERE "+c.String()+" ORDER BY s.updated_at", c.Args...)
}

// EmptyTrash implements sessionstore.TrashSteps. It runs only inside explicit
// delete and prune commands: loom never cleans up on its own.
func (w *writeTx) EmptyTrash(ctx context.Context, before time.Time) ([]string, error) {
	return w.ids(ctx, `DELETE FROM sessions WHERE deleted_at IS NOT NULL AND deleted_at < $1 RETURNING id`, ms(before))
}

// Purge implements sessionstore.TrashSteps.
func (w *writeTx) Purge(ctx context.Context, id string) error {
	_, err := w.tx.Exec(ctx, family+` DELETE FROM sessions WHERE id IN (SELECT id FROM fam)`, id)
	return err
}

// Trash implements sessionstore.TrashSteps, every family in one statement.
func (w *writeTx) Trash(ctx context.Context, ids []string, at time.Time) ([]string, error) {
	return w.ids(ctx, `WITH RECURSIVE fam(id) AS (
			SELECT unnest($1::text[]) COLLATE "C"
			UNION SELECT s.id FROM sessions s JOIN fam ON s.parent_id = fam.id WHERE s.kind = 'subagent'
		)
		UPDATE sessions SET deleted_at = $2 WHERE id IN (SELECT id FROM fam) AND deleted_at IS NULL RETURNING id`, ids, at)
}

// Untrash implements sessionstore.TrashSteps.
func (w *writeTx) Untrash(ctx context.Context, id string, at time.Time) ([]string, bool, error) {
	restored, err := w.ids(ctx, family+` UPDATE sessions SET deleted_at = NULL WHERE id IN (SELECT id FROM fam) AND deleted_at = $2 RETURNING id`, id, at)
	return restored, isUnique(err), err
}

// ids runs a statement that returns ids.
func (w *writeTx) ids(ctx context.Context, sql string, args ...any) ([]string, error) {
	return rowscan.All(ctx, rowsOf{w.tx}, rowscan.String, sql, args...)
}

// TurnFrom implements sessionstore.ForkReads.
func (w *writeTx) TurnFrom(ctx context.Context, src string, seq int64) (int, bool, error) {
	var turn int
	err := w.tx.QueryRow(ctx, `SELECT m.turn FROM spans sp CROSS JOIN LATERAL (SELECT m.turn, m.seq FROM messages m
		WHERE m.session_id = sp.store_id AND m.seq BETWEEN greatest(sp.first_seq, $1) AND sp.last_seq
		ORDER BY m.seq LIMIT 1) m
		WHERE sp.session_id = $2 ORDER BY m.seq LIMIT 1`, seq, src).Scan(&turn)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("fork %s: %w", src, err)
	}
	return turn, true, nil
}

// LastUser implements sessionstore.ForkReads.
func (w *writeTx) LastUser(ctx context.Context, src string, seq int64) (*loom.Message, error) {
	users, err := spanMessages(ctx, w.tx, src, 1, seq, " AND m.role = 'user'", 1, false)
	if err != nil || len(users) == 0 {
		return nil, err
	}
	return users[0], nil
}

// LastSummary implements sessionstore.ForkReads.
func (w *writeTx) LastSummary(ctx context.Context, src string, seq int64) (int64, error) {
	var last *int64
	err := w.tx.QueryRow(ctx, `SELECT max(m.seq) FROM spans sp JOIN messages m ON m.session_id = sp.store_id
		AND m.seq BETWEEN sp.first_seq AND least(sp.last_seq, $1) AND m.role = 'summary'
		WHERE sp.session_id = $2`, seq, src).Scan(&last)
	if err != nil || last == nil {
		return 0, err
	}
	return *last, nil
}

// UsageOf implements sessionstore.ForkReads.
func (w *writeTx) UsageOf(ctx context.Context, src string, from, to int64) (loom.Usage, error) {
	u, err := rowscan.Usage(w.tx.QueryRow(ctx, `SELECT `+query.UsageTotals("m.")+` FROM spans sp JOIN messages m ON m.session_id = sp.store_id
		AND m.seq BETWEEN greatest(sp.first_seq, $1) AND least(sp.last_seq, $2)
		WHERE sp.session_id = $3`, from, to, src))
	if err != nil {
		return u, fmt.Errorf("fork %s: usage: %w", src, err)
	}
	return u, nil
}

// TitlesLike implements sessionstore.ForkReads.
func (w *writeTx) TitlesLike(ctx context.Context, user, base string) ([]string, error) {
	return rowscan.All(ctx, rowsOf{w.tx}, rowscan.String, `SELECT title FROM sessions
		WHERE user_id = $1 AND deleted_at IS NULL AND lower(substr(title, 1, $2)) = lower($3)`,
		user, utf8.RuneCountInString(base), base)
}

// CreateFork implements sessionstore.ForkSteps: the session's insert, its spans and
// the read of the result in one round trip.
func (w *writeTx) CreateFork(ctx context.Context, src *loom.Session, plan *sessionstore.ForkPlan, spans []span.Span) (*loom.Session, error) {
	b := &pgx.Batch{}
	b.Queue(forkSessionSQL, plan.ID, nullString(plan.Key), plan.Title, plan.Turn, plan.LastSeq, ms(w.s.Now()), src.ID, clean(plan.LastPrompt), plan.SummarySeq)
	queueSpans(b, plan.ID, spans)
	b.Queue(`SELECT `+rowscan.SessionColumns+rowscan.SessionFrom+`WHERE s.id = $1`, plan.ID)
	spanStatements := b.Len() - 2 // all but the session's insert and read
	br := w.tx.SendBatch(ctx, b)
	defer br.Close()
	switch _, err := br.Exec(); {
	case isUnique(err):
		return nil, loom.Errorf(loom.ECONFLICT, "a session with key %q already exists", plan.Key)
	case err != nil:
		return nil, fmt.Errorf("fork %s: %w", src.ID, err)
	}
	for range spanStatements {
		if _, err := br.Exec(); err != nil {
			return nil, fmt.Errorf("fork %s: spans: %w", src.ID, err)
		}
	}
	out, err := rowscan.Session(br.QueryRow(), w.s.live)
	if err != nil {
		return nil, fmt.Errorf("fork %s: %w", src.ID, err)
	}
	return out, br.Close()
}

// StoreRewind implements sessionstore.ForkSteps in one round trip.
func (w *writeTx) StoreRewind(ctx context.Context, src *loom.Session, plan *sessionstore.RewindPlan, forkSpans, keepSpans []span.Span) (*loom.Session, error) {
	f, fu, u := plan.Fork, plan.ForkUsage, plan.KeepUsage
	now := ms(plan.At)
	b := &pgx.Batch{}
	b.Queue(rewindForkSQL, f.ID, f.Title, f.Turn, now, src.ID,
		fu.InputTokens, fu.OutputTokens, fu.ReasoningTokens, fu.CacheReadTokens, fu.CacheWriteTokens,
		fu.CostUSD, fu.APICalls, fu.Compactions, fu.CacheWrite1hTokens)
	queueSpans(b, f.ID, forkSpans)
	queueSpans(b, src.ID, keepSpans)
	b.Queue(`UPDATE sessions SET message_count = $2, turn_count = $3, last_prompt = $4,
		summary_seq = $5, input_tokens = $6, output_tokens = $7, reasoning_tokens = $8, cache_read_tokens = $9,
		cache_write_tokens = $10, cost_usd = $11, api_calls = $12, compactions = $13, updated_at = $14,
		cache_write_1h_tokens = $15 WHERE id = $1`, src.ID, plan.KeepSeq, f.Turn, clean(plan.KeepPrompt), plan.KeepSummarySeq,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens,
		u.CostUSD, u.APICalls, u.Compactions, now, u.CacheWrite1hTokens)
	b.Queue(`SELECT `+rowscan.SessionColumns+rowscan.SessionFrom+`WHERE s.id = $1`, f.ID)
	br := w.tx.SendBatch(ctx, b)
	defer br.Close()
	for range b.Len() - 1 {
		if _, err := br.Exec(); err != nil {
			return nil, fmt.Errorf("rewind %s: %w", src.ID, err)
		}
	}
	out, err := rowscan.Session(br.QueryRow(), w.s.live)
	if err != nil {
		return nil, fmt.Errorf("rewind %s: %w", src.ID, err)
	}
	return out, br.Close()
}

// Spans implements sessionstore.BodySteps.
func (w *writeTx) Spans(ctx context.Context, id string) ([]span.Span, error) {
	return readSpans(ctx, w.tx, id)
}

// WriteSpans implements sessionstore.BodySteps.
func (w *writeTx) WriteSpans(ctx context.Context, id string, spans []span.Span) error {
	b := &pgx.Batch{}
	queueSpans(b, id, spans)
	if err := w.tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("write spans of %s: %w", id, err)
	}
	return nil
}

// Readers implements sessionstore.BodySteps.
func (w *writeTx) Readers(ctx context.Context, store string, seq int64, id string) ([]string, error) {
	rows, err := w.tx.Query(ctx, `SELECT DISTINCT session_id FROM spans
		WHERE store_id = $1 AND first_seq <= $2 AND last_seq >= $2 AND session_id <> $3`, store, seq, id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// CopyRow implements sessionstore.BodySteps, with the body's insert in the same
// statement.
func (w *writeTx) CopyRow(ctx context.Context, to, from string, seq int64, b *sqlstore.Body) error {
	// The body's values are bound even when no body is inserted: parts
	// must be JSON all the same.
	body := sqlstore.Body{Parts: "[]"}
	if b != nil {
		body = *b
	}
	_, err := w.tx.Exec(ctx, `WITH b AS (INSERT INTO bodies (parts, content) SELECT $5, $6 WHERE $4::boolean RETURNING id) `+copyRowSQL,
		to, from, seq, b != nil, body.Parts, body.Text)
	return err
}

// DropUnread implements sessionstore.BodySteps.
func (w *writeTx) DropUnread(ctx context.Context, store string, seq int64) error {
	_, err := w.tx.Exec(ctx, `DELETE FROM messages WHERE session_id = $1 AND seq = $2
		AND NOT EXISTS (SELECT 1 FROM spans WHERE store_id = $1 AND first_seq <= $2 AND last_seq >= $2)`, store, seq)
	if err != nil {
		return fmt.Errorf("update message %d: %w", seq, err)
	}
	return nil
}

// Rewrite implements sessionstore.BodySteps.
func (w *writeTx) Rewrite(ctx context.Context, store string, seq int64, b sqlstore.Body) error {
	var body int64
	var shared bool
	if err := w.tx.QueryRow(ctx, `SELECT body_id, EXISTS (SELECT 1 FROM messages o WHERE o.body_id = m.body_id AND (o.session_id <> m.session_id OR o.seq <> m.seq))
		FROM messages m WHERE session_id = $1 AND seq = $2`, store, seq).Scan(&body, &shared); err != nil {
		return err
	}
	var err error
	if shared {
		_, err = w.tx.Exec(ctx, `WITH b AS (INSERT INTO bodies (parts, content) VALUES ($1, $2) RETURNING id)
			UPDATE messages SET body_id = (SELECT id FROM b) WHERE session_id = $3 AND seq = $4`,
			b.Parts, b.Text, store, seq)
	} else {
		_, err = w.tx.Exec(ctx, `UPDATE bodies SET parts = $1, content = $2 WHERE id = $3`, b.Parts, b.Text, body)
	}
	return err
}

// engine is the store as sessionstore's writes take it.
type engine struct{ s *Store }

// Begin implements sessionstore.Engine: one read-committed
// transaction, and no sync log. A PostgreSQL store is shared by its
// users' machines already, and it may be a hub's store
// (loom.SyncStore); the machines that sync through a hub keep embedded
// SQLite stores.
func (e engine) Begin(ctx context.Context) (sessionstore.Tx, error) {
	w, err := e.begin(ctx)
	if err != nil {
		return sessionstore.Tx{}, err
	}
	return w.steps(), nil
}

// steps returns w with the roles of sessionstore.Tx a PostgreSQL store
// serves: all but sync's.
func (w *writeTx) steps() sessionstore.Tx {
	return sessionstore.Tx{SessionSteps: w, BodySteps: w, ForkSteps: w, TrashSteps: w, ImportSteps: w, SettleSteps: w, PromptTx: w, Ender: w}
}

// begin starts a read-committed transaction.
func (e engine) begin(ctx context.Context) (*writeTx, error) {
	tx, err := e.s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", serverError(err))
	}
	return &writeTx{s: e.s, tx: tx, ctx: ctx}, nil
}

// End implements sessionstore.Ender: the server's errors in its own
// words (serverError).
func (w *writeTx) End(err error) error {
	if err != nil {
		w.tx.Rollback(context.WithoutCancel(w.ctx))
		return serverError(err)
	}
	if err := w.tx.Commit(w.ctx); err != nil {
		return fmt.Errorf("commit: %w", serverError(err))
	}
	return nil
}

// BeginPut implements sessionstore.Engine. Puts of one host serialise
// on its sync_hosts row, which SyncLast locks.
func (e engine) BeginPut(ctx context.Context) (sessionstore.PutWrites, error) {
	w, err := e.begin(ctx)
	if err != nil {
		return nil, err
	}
	return syncWrites{w}, nil
}

// Now implements sessionstore.Engine, to the millisecond the columns
// keep.
func (e engine) Now() time.Time { return ms(e.s.Now()) }

// Imported runs analyzeImported once an import of n sessions is
// committed.
func (e engine) Imported(ctx context.Context, n int) { e.s.analyzeImported(ctx, n) }

// ForkSource implements sessionstore.ForkSteps: FOR SHARE waits for a
// message being appended to the source and keeps its parts and spans
// from changing until the fork is made.
func (w *writeTx) ForkSource(ctx context.Context, id string) (*loom.Session, error) {
	return w.s.sessionTx(ctx, w.tx, id, "FOR SHARE OF s")
}

// RecordFiles implements sessionstore.ImportSteps.
func (w *writeTx) RecordFiles(ctx context.Context, files []loom.ImportedFile) error {
	for i := range files {
		f := &files[i]
		if !storable(f.UserID, f.Path, f.Tool, f.Bundle, f.SourceID, f.SessionID) {
			return loom.Errorf(loom.EINVALID, "imported file record must be UTF-8 text without NUL bytes")
		}
	}
	return w.s.recordFiles(ctx, w.tx, files)
}
