package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
	"github.com/loomhq/loom/synclog"
)

// The statements of an append, prepared once per store (see writes).
const (
	insertBodySQL    = `INSERT INTO bodies (parts, content) VALUES (?, ?)`
	insertMessageSQL = `INSERT INTO messages (session_id, seq, id, role, turn, body_id,
		model, provider, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
		cache_write_tokens, cost_usd, api_calls, compactions, error, created_at, completed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	appendUpdateSQL = `UPDATE sessions SET message_count = ?, turn_count = ?,
			last_prompt = ?, title = ?, summary_seq = ?,
			input_tokens = ?, output_tokens = ?, reasoning_tokens = ?, cache_read_tokens = ?,
			cache_write_tokens = ?, cost_usd = ?, api_calls = ?, compactions = ?, updated_at = ?,
			archived_at = NULL
			WHERE id = CAST(? AS TEXT)`
	sessionByIDSQL = `SELECT ` + rowscan.SessionColumns + rowscan.SessionFrom + `WHERE s.id = CAST(? AS TEXT)`
)

// hotWrites are prepared on the writer before its first transaction.
var hotWrites = []string{insertBodySQL, insertMessageSQL, appendUpdateSQL, sessionByIDSQL, ownStoreSQL, syncHostSQL}

// Append implements loom.Store with sqlstore.Append.
func (s *Store) Append(ctx context.Context, x *loom.Session, msgs ...*loom.Message) error {
	if err := sqlstore.PrepareAppend(x, msgs); err != nil {
		return err
	}
	var fresh *loom.Session
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		var err error
		fresh, err = sqlstore.Append(ctx, writes{s, tx}, x, msgs, s.holder.Owner, s.Now())
		return err
	})
	if err != nil {
		return err
	}
	*x = *fresh
	return nil
}

// insertMessage stores m and its body, under store (see sqlstore.Span).
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
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens,
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
		return spanMessages(ctx, db, sessionID, lo, hi, cond, false, 0, args...)
	}
	msgs, err := spanMessages(ctx, db, sessionID, lo, hi, cond, !q.Oldest, q.Limit, args...)
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
	return spanMessages(ctx, reads{s}, sessionID, max(from, 1), sqlstore.OpenSeq, "", false, 0)
}

// UpdatePart implements loom.Store. A message the session inherits (a
// fork's from its parent) is copied into the session first, and a body
// shared with another message is copied before it is changed, so the
// update never changes another session's history.
func (s *Store) UpdatePart(ctx context.Context, sessionID string, seq int64, part loom.Part) error {
	if err := part.Validate(); err != nil {
		return err
	}
	return s.withTx(ctx, func(tx *sql.Tx) error { return s.updatePart(ctx, tx, sessionID, seq, part) })
}

// updatePart is what UpdatePart does, inside tx.
func (s *Store) updatePart(ctx context.Context, tx *sql.Tx, sessionID string, seq int64, part loom.Part) error {
	if err := s.checkWriter(ctx, tx, sessionID); err != nil {
		return err
	}
	msgs, err := spanMessages(ctx, tx, sessionID, seq, seq, "", false, 0)
	if err != nil {
		return err
	}
	var m *loom.Message
	if len(msgs) > 0 {
		m = msgs[0]
	}
	if err := sqlstore.ReplacePart(m, sessionID, seq, part); err != nil {
		return err
	}
	if err := s.rewriteBody(ctx, tx, m); err != nil {
		return err
	}
	return s.record(ctx, tx, func() (synclog.Payload, error) {
		return &synclog.PartUpdated{SessionID: sessionID, Seq: seq, MessageID: m.ID, Part: part}, nil
	})
}

// UpdateUsage implements loom.Store.
func (s *Store) UpdateUsage(ctx context.Context, sessionID string, seq int64, u loom.Usage) error {
	return s.withTx(ctx, func(tx *sql.Tx) error { return s.updateUsage(ctx, tx, sessionID, seq, u) })
}

// updateUsage is what UpdateUsage does, inside tx.
func (s *Store) updateUsage(ctx context.Context, tx *sql.Tx, sessionID string, seq int64, u loom.Usage) error {
	if err := s.checkWriter(ctx, tx, sessionID); err != nil {
		return err
	}
	var old loom.Usage
	var mid string
	err := tx.QueryRowContext(ctx, `SELECT id, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
		cache_write_tokens, cost_usd, api_calls, compactions FROM messages WHERE session_id = CAST(? AS TEXT) AND seq = ?`, sessionID, seq).Scan(
		&mid, &old.InputTokens, &old.OutputTokens, &old.ReasoningTokens, &old.CacheReadTokens,
		&old.CacheWriteTokens, &old.CostUSD, &old.APICalls, &old.Compactions)
	if errors.Is(err, sql.ErrNoRows) {
		return loom.Errorf(loom.ENOTFOUND, "session %s stores no message %d of its own", sessionID, seq)
	}
	if err != nil {
		return fmt.Errorf("read usage of message %d: %w", seq, err)
	}
	if err := setUsage(ctx, tx, sessionID, sessionID, seq, old, u); err != nil {
		return err
	}
	return s.record(ctx, tx, func() (synclog.Payload, error) {
		return &synclog.UsageUpdated{SessionID: sessionID, Seq: seq, MessageID: mid, Usage: u}, nil
	})
}

// setUsage sets the usage of row seq of store, whose usage was old, to u,
// and moves the totals of session id by the difference.
func setUsage(ctx context.Context, tx *sql.Tx, id, store string, seq int64, old, u loom.Usage) error {
	d := u
	d.Sub(old)
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET input_tokens = ?, output_tokens = ?, reasoning_tokens = ?,
		cache_read_tokens = ?, cache_write_tokens = ?, cost_usd = ?, api_calls = ?, compactions = ?
		WHERE session_id = CAST(? AS TEXT) AND seq = ?`,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CostUSD, u.APICalls, u.Compactions,
		store, seq); err != nil {
		return fmt.Errorf("update usage of message %d: %w", seq, err)
	}
	_, err := tx.ExecContext(ctx, `UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
		reasoning_tokens = reasoning_tokens + ?, cache_read_tokens = cache_read_tokens + ?,
		cache_write_tokens = cache_write_tokens + ?, cost_usd = cost_usd + ?, api_calls = api_calls + ?,
		compactions = compactions + ? WHERE id = CAST(? AS TEXT)`,
		d.InputTokens, d.OutputTokens, d.ReasoningTokens, d.CacheReadTokens, d.CacheWriteTokens, d.CostUSD, d.APICalls, d.Compactions, id)
	if err != nil {
		return fmt.Errorf("update usage of %s: %w", id, err)
	}
	return nil
}

// rewriteBody stores m's parts as sqlstore.WriteMessage says: a copy
// for the session when it inherits m, copies as it was for the sessions
// that read it when the session stores it, and a body of its own when
// another row shares its body.
func (s *Store) rewriteBody(ctx context.Context, tx *sql.Tx, m *loom.Message) error {
	parts, text, err := sqlstore.EncodeBody(m)
	if err != nil {
		return err
	}
	if err := sqlstore.WriteMessage(ctx, writes{s, tx}, m.SessionID, m.Seq, sqlstore.Body{Parts: parts, Text: text}); err != nil {
		return fmt.Errorf("update message %d: %w", m.Seq, err)
	}
	// An imported session is as recent as its source's messages, not as
	// the import that completed one of them (loom.Session.ApplyAppend).
	_, err = tx.ExecContext(ctx, `UPDATE sessions SET updated_at = ? WHERE id = ? AND source_tool = ''`, s.now(), m.SessionID)
	return err
}

// copyRowSQL copies row ?4 of store ?3 to store ?1, with body ?2 (NULL:
// the same body).
const copyRowSQL = `INSERT INTO messages (session_id, seq, id, role, turn, body_id,
	model, provider, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
	cache_write_tokens, cost_usd, api_calls, compactions, error, created_at, completed_at)
	SELECT ?1, seq, id, role, turn, coalesce(?2, body_id), model, provider, input_tokens, output_tokens,
		reasoning_tokens, cache_read_tokens, cache_write_tokens, cost_usd, api_calls,
		compactions, error, created_at, completed_at
	FROM messages WHERE session_id = ?3 AND seq = ?4`

// RepairInterrupted implements loom.Store. It reads the session
// backwards to the user message that opens its last turn.
func (s *Store) RepairInterrupted(ctx context.Context, sessionID string) (int, error) {
	// Almost always there is nothing to repair: find out on a reader,
	// without taking the write lock.
	if r, err := s.unfinished(ctx, reads{s}, sessionID); err != nil || r.Parts == 0 {
		return 0, err
	}
	repaired := 0
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		if err := s.checkWriter(ctx, tx, sessionID); err != nil {
			return err
		}
		// Again inside the transaction: another writer may have finished
		// or repaired them meanwhile.
		r, err := s.unfinished(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		for _, m := range r.Messages {
			if err := s.rewriteBody(ctx, tx, m); err != nil {
				return err
			}
			if err := s.recordTools(ctx, tx, m); err != nil {
				return err
			}
		}
		repaired = r.Parts
		return nil
	})
	return repaired, err
}

// recordTools records the tool parts of m, which a repair changed or
// added: each as a part update, which every host merges by its state
// (synclog.NewerPart).
func (s *Store) recordTools(ctx context.Context, tx *sql.Tx, m *loom.Message) error {
	for _, p := range m.Parts {
		if p.Type != loom.PartTool {
			continue
		}
		err := s.record(ctx, tx, func() (synclog.Payload, error) {
			return &synclog.PartUpdated{SessionID: m.SessionID, Seq: m.Seq, MessageID: m.ID, Part: p}, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// unfinished reads the session's last turn backwards to its user message
// and repairs it in memory.
func (s *Store) unfinished(ctx context.Context, db queryer, sessionID string) (*sqlstore.Repair, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+PackedMessageColumns+spanFrom+spanOrderDesc, 1, sqlstore.OpenSeq, sessionID)
	if err != nil {
		return nil, fmt.Errorf("repair %s: %w", sessionID, err)
	}
	defer rows.Close()
	r := sqlstore.NewRepair(s.Now())
	scan := PackedMessageOf(sessionID)
	for rows.Next() {
		m, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("repair %s: %w", sessionID, err)
		}
		if !r.Add(m) {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("repair %s: %w", sessionID, err)
	}
	return r, nil
}
