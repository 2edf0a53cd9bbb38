package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/loomhq/loom/sessionstore"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// insertMessageSQL stores a message and its body in one statement, under
// the store where its session stores its own (see span.Span).
const insertMessageSQL = `WITH b AS (INSERT INTO bodies (parts, content) VALUES ($1, $2) RETURNING id)
	INSERT INTO messages (session_id, seq, id, role, turn, body_id, model, provider,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
		cache_write_1h_tokens, cost_usd, api_calls, compactions, error, created_at, completed_at)
	SELECT coalesce((SELECT store_id FROM spans WHERE session_id = $3 ORDER BY first_seq DESC LIMIT 1), $3), $4, $5, $6, $7, b.id, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21 FROM b`

// messageArgs are the arguments of insertMessageSQL for m.
func messageArgs(m *loom.Message) ([]any, error) {
	parts, err := sqlstore.EncodeParts(m)
	if err != nil {
		return nil, err
	}
	u := m.Usage
	return []any{parts, clean(m.SearchText()),
		m.SessionID, m.Seq, m.ID, m.Role, m.Turn, m.Model, m.Provider,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CacheWrite1hTokens,
		u.CostUSD, u.APICalls, u.Compactions, sqlstore.EncodeError(m.Error), ms(m.CreatedAt), nullTime(m.CompletedAt)}, nil
}

// Messages implements loom.Store. The newest-N read walks each span's
// rows backwards from its end (see spanNewest), so its cost does not
// grow with the session, nor with its ancestors' when it is a fork.
func (s *Store) Messages(ctx context.Context, sessionID string, q loom.MessageQuery) ([]*loom.Message, error) {
	return messagesOf(ctx, s.pool, sessionID, q)
}

// messagesOf reads what Messages reads, through db.
func messagesOf(ctx context.Context, db querier, sessionID string, q loom.MessageQuery) ([]*loom.Message, error) {
	if !storable(sessionID) {
		return nil, nil
	}
	lo, hi := sqlstore.Window(q)
	cond, args := "", []any(nil)
	if q.Turn > 0 {
		cond, args = " AND m.turn = $4", []any{q.Turn}
	}
	if q.Limit <= 0 {
		return spanMessagesOf(ctx, db, sessionID, lo, hi, cond, 0, false, q.Salvage, args...)
	}
	msgs, err := spanMessagesOf(ctx, db, sessionID, lo, hi, cond, q.Limit, q.Oldest, q.Salvage, args...)
	if !q.Oldest {
		slices.Reverse(msgs)
	}
	return msgs, err
}

// Context implements loom.Store.
func (s *Store) Context(ctx context.Context, sessionID string) ([]*loom.Message, error) {
	if !storable(sessionID) {
		return nil, loom.NotFound(sessionID)
	}
	var from int64
	err := s.pool.QueryRow(ctx, `SELECT summary_seq FROM sessions WHERE id = $1`, sessionID).Scan(&from)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, loom.NotFound(sessionID)
	}
	if err != nil {
		return nil, fmt.Errorf("read context of %s: %w", sessionID, err)
	}
	return spanMessages(ctx, s.pool, sessionID, max(from, 1), span.OpenSeq, "", 0, false)
}

// BeginUpdate implements sessionstore.SessionSteps with beginUpdate.
func (w *writeTx) BeginUpdate(ctx context.Context, id string) error {
	return w.s.beginUpdate(ctx, w.tx, id)
}

// Message implements sessionstore.BodySteps.
func (w *writeTx) Message(ctx context.Context, id string, seq int64) (*loom.Message, error) {
	msgs, err := spanMessages(ctx, w.tx, id, seq, seq, "", 0, false)
	if err != nil || len(msgs) == 0 {
		return nil, err
	}
	return msgs[0], nil
}

// EncodeBody implements sessionstore.BodySteps: the search text cleaned for
// PostgreSQL's text (clean).
func (w *writeTx) EncodeBody(m *loom.Message) (sqlstore.Body, error) {
	parts, err := sqlstore.EncodeParts(m)
	return sqlstore.Body{Parts: parts, Text: clean(m.SearchText())}, err
}

// Written implements sessionstore.SessionSteps.
func (w *writeTx) Written(ctx context.Context, id string, now time.Time) error {
	_, err := w.tx.Exec(ctx, `UPDATE sessions SET updated_at = $1 WHERE id = $2 AND source_tool = ''`, ms(now), id)
	return err
}

// ReplacePrompt implements sessionstore.PromptTx.
func (w *writeTx) ReplacePrompt(ctx context.Context, old, next string) error {
	_, err := w.tx.Exec(ctx, `UPDATE sessions SET last_prompt = $1 WHERE last_prompt = $2`, clean(next), clean(old))
	return err
}

// OwnUsage implements sessionstore.SessionSteps, locking the message's row.
func (w *writeTx) OwnUsage(ctx context.Context, id string, seq int64) (string, loom.Usage, error) {
	return rowscan.OwnUsage(w.tx.QueryRow(ctx, `SELECT `+rowscan.OwnUsageColumns+`
		FROM messages WHERE session_id = $1 AND seq = $2 FOR UPDATE`, id, seq), pgx.ErrNoRows, id, seq)
}

// MoveUsage implements sessionstore.SessionSteps in one round trip.
func (w *writeTx) MoveUsage(ctx context.Context, id, store string, seq int64, old, u loom.Usage) error {
	d := u
	d.Sub(old)
	b := &pgx.Batch{}
	b.Queue(`UPDATE messages SET input_tokens = $1, output_tokens = $2, reasoning_tokens = $3,
		cache_read_tokens = $4, cache_write_tokens = $5, cost_usd = $6, api_calls = $7, compactions = $8,
		cache_write_1h_tokens = $11 WHERE session_id = $9 AND seq = $10`,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CostUSD, u.APICalls, u.Compactions,
		store, seq, u.CacheWrite1hTokens)
	b.Queue(`UPDATE sessions SET input_tokens = input_tokens + $1, output_tokens = output_tokens + $2,
		reasoning_tokens = reasoning_tokens + $3, cache_read_tokens = cache_read_tokens + $4,
		cache_write_tokens = cache_write_tokens + $5, cost_usd = cost_usd + $6, api_calls = api_calls + $7,
		compactions = compactions + $8, cache_write_1h_tokens = cache_write_1h_tokens + $10 WHERE id = $9`,
		d.InputTokens, d.OutputTokens, d.ReasoningTokens, d.CacheReadTokens, d.CacheWriteTokens, d.CostUSD, d.APICalls, d.Compactions, id,
		d.CacheWrite1hTokens)
	return w.tx.SendBatch(ctx, b).Close()
}

// copyRowSQL copies row $3 of store $2 to store $1: with the body that a
// WITH b before it inserted when $4, else sharing the row's body.
const copyRowSQL = `INSERT INTO messages (session_id, seq, id, role, turn, body_id,
		model, provider, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
		cache_write_tokens, cache_write_1h_tokens, cost_usd, api_calls, compactions, error, created_at, completed_at)
	SELECT $1, seq, id, role, turn, CASE WHEN $4::boolean THEN (SELECT id FROM b) ELSE body_id END, model, provider,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, cost_usd,
		api_calls, compactions, error, created_at, completed_at
	FROM messages WHERE session_id = $2 AND seq = $3`

// LastTurn implements sessionstore.BodySteps: it reads the messages from the
// last user message on.
func (w *writeTx) LastTurn(ctx context.Context, id string, r *sessionstore.Repair) error {
	users, err := spanMessages(ctx, w.tx, id, 1, span.OpenSeq, " AND m.role = 'user'", 1, false)
	if err != nil {
		return err
	}
	from := int64(1)
	if len(users) > 0 {
		from = users[0].Seq + 1
	}
	msgs, err := spanMessages(ctx, w.tx, id, from, span.OpenSeq, "", 0, false)
	if err != nil {
		return err
	}
	for _, m := range slices.Backward(msgs) {
		if !r.Add(m) {
			break
		}
	}
	return nil
}
