package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/loomhq/loom"
)

// newSession makes an empty session for user.
func (s *minimal) newSession(ctx context.Context, user string) (string, error) {
	id := loom.NewID()
	now := loom.FormatTime(time.Now())
	_, err := s.db.ExecContext(ctx, `INSERT INTO sessions (id, user_id, title, created_at, updated_at, message_count, last_prompt)
		VALUES (?, ?, '', ?, ?, 0, '')`, id, user, now, now)
	return id, err
}

// append adds a user message to session durably: the count read, the
// message and its index row written and the session updated in one
// IMMEDIATE transaction.
func (s *minimal) append(ctx context.Context, session, text string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var count int64
	var turn sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT s.message_count, m.data ->> '$.turn'
		FROM sessions s LEFT JOIN messages m ON m.session_id = s.id AND m.seq = s.message_count
		WHERE s.id = ?`, session).Scan(&count, &turn); err != nil {
		return err
	}
	now := time.Now()
	m := &loom.Message{ID: loom.NewID(), Role: loom.RoleUser, Turn: int(turn.Int64) + 1, CreatedAt: now, CompletedAt: &now,
		Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: text}}}
	data, err := minimalData(m)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO messages (session_id, seq, data) VALUES (?, ?, ?)`, session, count+1, data)
	if err != nil {
		return err
	}
	rowid, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages_fts (rowid, text) VALUES (?, ?)`, rowid, m.SearchText()); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET message_count = ?, last_prompt = ?, updated_at = ? WHERE id = ?`,
		count+1, text, loom.FormatTime(now), session); err != nil {
		return err
	}
	return tx.Commit()
}

// fork copies all of session into a new session and returns its id.
func (s *minimal) fork(ctx context.Context, session string) (string, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	id, err := forkMinimal(ctx, tx, session)
	if err != nil {
		return "", err
	}
	return id, tx.Commit()
}

// forkMinimal copies session's row and messages in tx, and indexes the
// copies: the index holds no text, so each copied message is read back
// and its text made in Go.
func forkMinimal(ctx context.Context, tx *sql.Tx, session string) (string, error) {
	id := loom.NewID()
	now := loom.FormatTime(time.Now())
	res, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, user_id, title, created_at, updated_at, message_count, last_prompt)
		SELECT ?, user_id, title, ?, ?, message_count, last_prompt FROM sessions WHERE id = ?`, id, now, now, session)
	if err != nil {
		return "", err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return "", fmt.Errorf("fork %s: no such session", session)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages (session_id, seq, data)
		SELECT ?, seq, data FROM messages WHERE session_id = ? ORDER BY seq`, id, session); err != nil {
		return "", err
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO messages_fts (rowid, text) VALUES (?, ?)`)
	if err != nil {
		return "", err
	}
	defer ins.Close()
	rows, err := tx.QueryContext(ctx, `SELECT rowid, data FROM messages WHERE session_id = ?`, id)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var rowid int64
	var data []byte
	for rows.Next() {
		if err := rows.Scan(&rowid, &data); err != nil {
			return "", err
		}
		var m loom.Message
		if err := json.Unmarshal(data, &m); err != nil {
			return "", err
		}
		if _, err := ins.ExecContext(ctx, rowid, m.SearchText()); err != nil {
			return "", err
		}
	}
	return id, rows.Err()
}

// rewind takes session back to the end of turn: a fork keeps all of it,
// and the session's messages after the turn leave it and the index. It
// returns the fork.
func (s *minimal) rewind(ctx context.Context, session string, turn int) (string, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT seq FROM messages WHERE session_id = ? AND data ->> '$.turn' > ?
		ORDER BY seq LIMIT 1`, session, turn).Scan(&next); err != nil {
		return "", fmt.Errorf("rewind %s to turn %d: %w", session, turn, err)
	}
	id, err := forkMinimal(ctx, tx, session)
	if err != nil {
		return "", err
	}
	var prompt string
	if err := tx.QueryRowContext(ctx, `SELECT data FROM messages WHERE session_id = ? AND seq < ? AND data ->> '$.role' = 'user'
		ORDER BY seq DESC LIMIT 1`, session, next).Scan(&prompt); err != nil && err != sql.ErrNoRows {
		return "", err
	}
	if prompt != "" {
		var m loom.Message
		if err := json.Unmarshal([]byte(prompt), &m); err != nil {
			return "", err
		}
		prompt = m.Text()
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`DELETE FROM messages_fts WHERE rowid IN (SELECT rowid FROM messages WHERE session_id = ? AND seq >= ?)`, []any{session, next}},
		{`DELETE FROM messages WHERE session_id = ? AND seq >= ?`, []any{session, next}},
		{`UPDATE sessions SET message_count = ?, last_prompt = ?, updated_at = ? WHERE id = ?`,
			[]any{next - 1, prompt, loom.FormatTime(time.Now()), session}},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return "", err
		}
	}
	return id, tx.Commit()
}

// clear deletes the sessions of *ids and empties it.
func (s *minimal) clear(ctx context.Context, ids *[]string) error {
	err := s.delete(ctx, *ids)
	*ids = nil
	return err
}

// delete removes sessions with their messages and index rows.
func (s *minimal) delete(ctx context.Context, ids []string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, id := range ids {
		if id == "" {
			continue
		}
		for _, q := range []string{
			`DELETE FROM messages_fts WHERE rowid IN (SELECT rowid FROM messages WHERE session_id = ?)`,
			`DELETE FROM messages WHERE session_id = ?`,
			`DELETE FROM sessions WHERE id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return fmt.Errorf("delete %s: %w", id, err)
			}
		}
	}
	return tx.Commit()
}
