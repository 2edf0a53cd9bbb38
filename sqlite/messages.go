package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/loomhq/loom/sessionstore"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// The statements of an append, prepared once per store (see writes).
const (
	insertBodySQL    = `INSERT INTO bodies (parts, content) VALUES (?, ?)`
	insertMessageSQL = `INSERT INTO messages (session_id, seq, id, role, turn, body_id,
		model, provider, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
		cache_write_tokens, cache_write_1h_tokens, cost_usd, api_calls, compactions, error, created_at, completed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	appendUpdateSQL = `UPDATE sessions SET message_count = ?, turn_count = ?,
			last_prompt = ?, title = ?, summary_seq = ?,
			input_tokens = ?, output_tokens = ?, reasoning_tokens = ?, cache_read_tokens = ?,
			cache_write_tokens = ?, cache_write_1h_tokens = ?, cost_usd = ?, api_calls = ?, compactions = ?, updated_at = ?,
			archived_at = NULL
			WHERE id = CAST(? AS TEXT)`
	sessionByIDSQL = `SELECT ` + rowscan.SessionColumns + rowscan.SessionFrom + `WHERE s.id = CAST(? AS TEXT)`
)

// hotWrites are prepared on the writer before its first transaction.
var hotWrites = []string{insertBodySQL, insertMessageSQL, appendUpdateSQL, sessionByIDSQL, ownStoreSQL, syncHostSQL}

// insertMessage stores m and its body, under store (see span.Span).
func insertMessage(ctx context.Context, tx writes, store string, m *loom.Message) error {
	parts, text, err := sqlstore.EncodeBody(m)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, insertBodySQL, parts, text)
	if err != nil {
		return fmt.Errorf("store message: %w", err)
	}
	body, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, insertMessageSQL, messageArgs(store, m, body)...); err != nil {
		return fmt.Errorf("store message %d: %w", m.Seq, err)
	}
	return nil
}

// messageArgs are the arguments of insertMessageSQL for m, stored under
// store, whose body is the row body.
func messageArgs(store string, m *loom.Message, body int64) []any {
	u := m.Usage
	return []any{store, m.Seq, m.ID, m.Role, m.Turn, body, m.Model, m.Provider,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CacheWrite1hTokens,
		u.CostUSD, u.APICalls, u.Compactions, sqlstore.EncodeError(m.Error), loom.FormatTime(m.CreatedAt), nullTime(m.CompletedAt)}
}

// Messages implements loom.Store. The newest-N read walks each span's
// rows backwards from its end (see spanFrom), so its cost does not grow
// with the session, nor with its ancestors' when it is a fork.
func (s *Store) Messages(ctx context.Context, sessionID string, q loom.MessageQuery) ([]*loom.Message, error) {
	return messagesOf(ctx, reads{s}, sessionID, q)
}

// messagesOf reads what Messages reads, through db.
func messagesOf(ctx context.Context, db queryer, sessionID string, q loom.MessageQuery) ([]*loom.Message, error) {
	lo, hi := sqlstore.Window(q)
	cond, args := "", []any(nil)
	if q.Turn > 0 {
		cond, args = " AND m.turn = ?", []any{q.Turn}
	}
	if q.Limit <= 0 {
		return spanMessagesOf(ctx, db, sessionID, lo, hi, cond, false, 0, q.Salvage, args...)
	}
	msgs, err := spanMessagesOf(ctx, db, sessionID, lo, hi, cond, !q.Oldest, q.Limit, q.Salvage, args...)
	if !q.Oldest {
		slices.Reverse(msgs)
	}
	return msgs, err
}

// Context implements loom.Store.
func (s *Store) Context(ctx context.Context, sessionID string) ([]*loom.Message, error) {
	var from int64
	err := reads{s}.QueryRowContext(ctx, `SELECT summary_seq FROM sessions WHERE id = ?`, sessionID).Scan(&from)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, loom.NotFound(sessionID)
	}
	if err != nil {
		return nil, fmt.Errorf("read context of %s: %w", sessionID, err)
	}
	return spanMessages(ctx, reads{s}, sessionID, max(from, 1), span.OpenSeq, "", false, 0)
}

// BeginUpdate implements sessionstore.SessionSteps: the transaction is
// immediate, and holds SQLite's one write lock.
func (w writes) BeginUpdate(ctx context.Context, id string) error {
	return w.s.checkWriter(ctx, w.tx, id)
}

// Message implements sessionstore.BodySteps.
func (w writes) Message(ctx context.Context, id string, seq int64) (*loom.Message, error) {
	msgs, err := spanMessages(ctx, w, id, seq, seq, "", false, 0)
	if err != nil || len(msgs) == 0 {
		return nil, err
	}
	return msgs[0], nil
}

// EncodeBody implements sessionstore.BodySteps: the search text in a column
// of its own (sqlstore.EncodeBody).
func (w writes) EncodeBody(m *loom.Message) (sqlstore.Body, error) {
	parts, text, err := sqlstore.EncodeBody(m)
	return sqlstore.Body{Parts: parts, Text: text}, err
}

// Written implements sessionstore.SessionSteps.
func (w writes) Written(ctx context.Context, id string, now time.Time) error {
	_, err := w.ExecContext(ctx, `UPDATE sessions SET updated_at = ? WHERE id = ? AND source_tool = ''`, loom.FormatTime(now), id)
	return err
}

// ReplacePrompt implements sessionstore.PromptTx.
func (w writes) ReplacePrompt(ctx context.Context, old, next string) error {
	_, err := w.ExecContext(ctx, `UPDATE sessions SET last_prompt = ? WHERE last_prompt = ?`, next, old)
	return err
}

// OwnUsage implements sessionstore.SessionSteps.
func (w writes) OwnUsage(ctx context.Context, id string, seq int64) (string, loom.Usage, error) {
	return rowscan.OwnUsage(w.QueryRowContext(ctx, `SELECT `+rowscan.OwnUsageColumns+`
		FROM messages WHERE session_id = CAST(? AS TEXT) AND seq = ?`, id, seq), sql.ErrNoRows, id, seq)
}

// MoveUsage implements sessionstore.SessionSteps.
func (w writes) MoveUsage(ctx context.Context, id, store string, seq int64, old, u loom.Usage) error {
	d := u
	d.Sub(old)
	if _, err := w.ExecContext(ctx, `UPDATE messages SET input_tokens = ?, output_tokens = ?, reasoning_tokens = ?,
		cache_read_tokens = ?, cache_write_tokens = ?, cache_write_1h_tokens = ?, cost_usd = ?, api_calls = ?, compactions = ?
		WHERE session_id = CAST(? AS TEXT) AND seq = ?`,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CacheWrite1hTokens, u.CostUSD, u.APICalls, u.Compactions,
		store, seq); err != nil {
		return fmt.Errorf("update usage of message %d: %w", seq, err)
	}
	_, err := w.ExecContext(ctx, `UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
		reasoning_tokens = reasoning_tokens + ?, cache_read_tokens = cache_read_tokens + ?,
		cache_write_tokens = cache_write_tokens + ?, cache_write_1h_tokens = cache_write_1h_tokens + ?, cost_usd = cost_usd + ?,
		api_calls = api_calls + ?, compactions = compactions + ? WHERE id = CAST(? AS TEXT)`,
		d.InputTokens, d.OutputTokens, d.ReasoningTokens, d.CacheReadTokens, d.CacheWriteTokens, d.CacheWrite1hTokens, d.CostUSD, d.APICalls, d.Compactions, id)
	if err != nil {
		return fmt.Errorf("update usage of %s: %w", id, err)
	}
	return nil
}

// copyRowSQL copies row ?4 of store ?3 to store ?1, with body ?2 (NULL:
// the same body).
const copyRowSQL = `INSERT INTO messages (session_id, seq, id, role, turn, body_id,
	model, provider, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
	cache_write_tokens, cache_write_1h_tokens, cost_usd, api_calls, compactions, error, created_at, completed_at)
	SELECT ?1, seq, id, role, turn, coalesce(?2, body_id), model, provider, input_tokens, output_tokens,
		reasoning_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, cost_usd, api_calls,
		compactions, error, created_at, completed_at
	FROM messages WHERE session_id = ?3 AND seq = ?4`

// LastTurn implements sessionstore.BodySteps.
func (w writes) LastTurn(ctx context.Context, id string, r *sessionstore.Repair) error {
	return lastTurn(ctx, w, id, r)
}

// lastTurn reads session id backwards, through db, into r until r says
// its last turn starts.
func lastTurn(ctx context.Context, db queryer, id string, r *sessionstore.Repair) error {
	rows, err := db.QueryContext(ctx, `SELECT `+packedMessageSelect+spanFrom+spanOrderDesc, 1, span.OpenSeq, id)
	if err != nil {
		return fmt.Errorf("repair %s: %w", id, err)
	}
	defer rows.Close()
	scan := packedMessageOf(id, false)
	for rows.Next() {
		m, err := scan(rows)
		if err != nil {
			return fmt.Errorf("repair %s: %w", id, err)
		}
		if !r.Add(m) {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("repair %s: %w", id, err)
	}
	return nil
}
