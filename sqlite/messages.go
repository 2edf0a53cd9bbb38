package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	"errors"
	"fmt"
	gojson "github.com/goccy/go-json"
	"slices"
	"strings"

	"github.com/loomhq/loom"
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
			cache_write_tokens = ?, cost_usd = ?, api_calls = ?, compactions = ?, updated_at = ?
			WHERE id = ?`
	sessionByIDSQL = `SELECT ` + sessionColumns + sessionFrom + `WHERE s.id = ?`
)

// hotWrites are prepared on the writer before its first transaction.
var hotWrites = []string{insertBodySQL, insertMessageSQL, appendUpdateSQL, sessionByIDSQL}

// Append implements loom.Store.
func (s *Store) Append(ctx context.Context, x *loom.Session, msgs ...*loom.Message) error {
	if x == nil {
		return loom.Errorf(loom.EINVALID, "append needs a session")
	}
	if x.ID == "" {
		x.ID = loom.NewID()
	}
	for _, m := range msgs {
		if err := m.Validate(); err != nil {
			return err
		}
	}
	var fresh *loom.Session
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		w := writes{s, tx}
		// One read gives the counters and the lock.
		cur, err := s.sessionTx(ctx, w, x.ID)
		switch {
		case loom.ErrorCode(err) == loom.ENOTFOUND:
			// A session the caller already wrote to has been deleted
			// meanwhile: never bring it back with half its history.
			if x.MessageCount > 0 {
				return loom.Errorf(loom.ENOTFOUND, "session %s was deleted", x.ID)
			}
			if err := s.checkWriter(ctx, tx, x.ID); err != nil {
				return err
			}
			if err := s.createSession(ctx, tx, x); err != nil {
				return err
			}
			if cur, err = s.sessionTx(ctx, w, x.ID); err != nil {
				return err
			}
		case err != nil:
			return err
		case cur.DeletedAt != nil:
			return loom.Errorf(loom.ENOTFOUND, "session %s is in the trash", x.ID)
		case cur.HeldElsewhere(s.owner):
			return loom.Locked(x.ID, cur.Lock)
		}
		fresh = cur
		if len(msgs) == 0 {
			return nil
		}
		now := s.Now()
		var add loom.Usage
		var prompt, firstPrompt string
		var summary int64
		count, turns := cur.MessageCount, cur.TurnCount
		for _, m := range msgs {
			count++
			if m.Role == loom.RoleUser {
				turns++
				if t := m.Text(); t != "" {
					prompt = t
					if firstPrompt == "" {
						firstPrompt = t
					}
				}
			}
			if m.Role == loom.RoleSummary {
				summary = int64(count)
			}
			m.SessionID, m.Seq, m.Turn = x.ID, int64(count), turns
			if m.ID == "" {
				m.ID = loom.NewID()
			}
			if m.CreatedAt.IsZero() {
				m.CreatedAt = now
			}
			if err := s.insertMessage(ctx, w, m); err != nil {
				return err
			}
			add.Add(m.Usage)
		}
		if prompt != "" {
			fresh.LastPrompt = loom.Truncate(prompt, loom.MaxPrompt)
			if fresh.Title == "" {
				fresh.Title = loom.TitleFrom(firstPrompt)
			}
		}
		fresh.MessageCount, fresh.TurnCount = count, turns
		fresh.SummarySeq = max(fresh.SummarySeq, summary)
		fresh.Usage.Add(add)
		fresh.UpdatedAt = now
		u := fresh.Usage
		_, err = w.ExecContext(ctx, appendUpdateSQL,
			count, turns, fresh.LastPrompt, fresh.Title, fresh.SummarySeq,
			u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens,
			u.CacheWriteTokens, u.CostUSD, u.APICalls, u.Compactions, loom.FormatTime(now), x.ID)
		if err != nil {
			return fmt.Errorf("append to %s: %w", x.ID, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	*x = *fresh
	return nil
}

// createSession inserts the row of a session created by its first message.
func (s *Store) createSession(ctx context.Context, tx *sql.Tx, x *loom.Session) error {
	if x.Kind == "" {
		x.Kind = loom.KindMain
	}
	if x.Surface == "" && x.Key != "" {
		x.Surface = loom.SurfaceOf(x.Key)
	}
	if err := x.Validate(); err != nil {
		return err
	}
	now := s.now()
	created := now
	if !x.CreatedAt.IsZero() {
		created = loom.FormatTime(x.CreatedAt)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, user_id, key, surface, title,
		description, kind, parent_id, fork_turn, project_id, project_name, project_root, cwd,
		model, provider, profile, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		x.ID, x.UserID, nullString(x.Key), x.Surface, strings.TrimSpace(x.Title), x.Description, x.Kind,
		nullString(x.ParentID), x.ForkTurn, x.Project.ID, x.Project.Name, x.Project.Root, x.Cwd,
		x.Model, x.Provider, x.Profile, created, now)
	if isUnique(err) {
		return loom.Errorf(loom.ECONFLICT, "a session with key %q already exists", x.Key)
	}
	if err != nil {
		return fmt.Errorf("create session %s: %w", x.ID, err)
	}
	return nil
}

func (s *Store) insertMessage(ctx context.Context, tx writes, m *loom.Message) error {
	parts, err := marshalParts(m)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, insertBodySQL, parts, m.SearchText())
	if err != nil {
		return fmt.Errorf("store message: %w", err)
	}
	body, err := res.LastInsertId()
	if err != nil {
		return err
	}
	return s.insertMessageRow(ctx, tx, m, body)
}

func (s *Store) insertMessageRow(ctx context.Context, tx writes, m *loom.Message, body int64) error {
	var errText any
	if m.Error != nil {
		errText = marshalError(m.Error)
	}
	u := m.Usage
	_, err := tx.ExecContext(ctx, insertMessageSQL,
		m.SessionID, m.Seq, m.ID, m.Role, m.Turn, body, m.Model, m.Provider,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens,
		u.CostUSD, u.APICalls, u.Compactions, errText, loom.FormatTime(m.CreatedAt), nullTime(m.CompletedAt))
	if err != nil {
		return fmt.Errorf("store message %d: %w", m.Seq, err)
	}
	return nil
}

func marshalError(e *loom.MessageError) string {
	b, _ := json.Marshal(e)
	return string(b)
}

func marshalParts(m *loom.Message) (string, error) {
	if m.Parts == nil {
		return "[]", nil
	}
	m.AssignPartIDs()
	b, err := gojson.Marshal(m.Parts)
	if err != nil {
		return "", fmt.Errorf("encode parts: %w", err)
	}
	return string(b), nil
}

const messageColumns = `m.session_id, m.seq, m.id, m.role, m.turn, b.parts, m.model, m.provider,
	m.input_tokens, m.output_tokens, m.reasoning_tokens, m.cache_read_tokens,
	m.cache_write_tokens, m.cost_usd, m.api_calls, m.compactions, m.error,
	m.created_at, m.completed_at`

const messageFrom = ` FROM messages m JOIN bodies b ON b.id = m.body_id `

func scanMessage(row scanner) (*loom.Message, error) {
	var (
		m                         loom.Message
		parts                     string
		errText, created, complet sql.NullString
	)
	err := row.Scan(&m.SessionID, &m.Seq, &m.ID, &m.Role, &m.Turn, &parts, &m.Model, &m.Provider,
		&m.Usage.InputTokens, &m.Usage.OutputTokens, &m.Usage.ReasoningTokens, &m.Usage.CacheReadTokens,
		&m.Usage.CacheWriteTokens, &m.Usage.CostUSD, &m.Usage.APICalls, &m.Usage.Compactions, &errText,
		&created, &complet)
	if err != nil {
		return nil, err
	}
	if err := gojson.Unmarshal([]byte(parts), &m.Parts); err != nil {
		return nil, fmt.Errorf("message %d of %s: parts: %w", m.Seq, m.SessionID, err)
	}
	if errText.Valid {
		m.Error = &loom.MessageError{}
		if json.Unmarshal([]byte(errText.String), m.Error) != nil {
			m.Error.Message = errText.String
		}
	}
	m.CreatedAt, m.CompletedAt = parseTime(created), optTime(complet)
	return &m, nil
}

func queryMessages(ctx context.Context, db queryer, q string, args ...any) ([]*loom.Message, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+messageColumns+messageFrom+q, args...)
	if err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	defer rows.Close()
	var out []*loom.Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("read messages: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Messages implements loom.Store. The newest-N read walks the primary key
// backwards from its end, so its cost does not grow with the session.
func (s *Store) Messages(ctx context.Context, sessionID string, q loom.MessageQuery) ([]*loom.Message, error) {
	where := "WHERE m.session_id = ?"
	args := []any{sessionID}
	if q.Before > 0 {
		where += " AND m.seq < ?"
		args = append(args, q.Before)
	}
	if q.After > 0 {
		where += " AND m.seq > ?"
		args = append(args, q.After)
	}
	if q.Limit <= 0 {
		return queryMessages(ctx, reads{s}, where+" ORDER BY m.seq", args...)
	}
	msgs, err := queryMessages(ctx, reads{s}, where+fmt.Sprintf(" ORDER BY m.seq DESC LIMIT %d", q.Limit), args...)
	slices.Reverse(msgs)
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
	return queryMessages(ctx, reads{s}, "WHERE m.session_id = ? AND m.seq >= ? ORDER BY m.seq", sessionID, from)
}

// UpdatePart implements loom.Store. A body shared with a fork is copied
// first, so the update never changes the other session's history.
func (s *Store) UpdatePart(ctx context.Context, sessionID string, seq int64, part loom.Part) error {
	if err := part.Validate(); err != nil {
		return err
	}
	return s.withTx(ctx, func(tx *sql.Tx) error {
		if err := s.checkWriter(ctx, tx, sessionID); err != nil {
			return err
		}
		msgs, err := queryMessages(ctx, tx, "WHERE m.session_id = ? AND m.seq = ?", sessionID, seq)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return loom.Errorf(loom.ENOTFOUND, "message %d of session %s not found", seq, sessionID)
		}
		m := msgs[0]
		i := slices.IndexFunc(m.Parts, func(p loom.Part) bool { return p.ID == part.ID })
		if i < 0 {
			return loom.Errorf(loom.ENOTFOUND, "part %s not found in message %d", part.ID, seq)
		}
		m.Parts[i] = part
		return s.rewriteBody(ctx, tx, m)
	})
}

// rewriteBody stores m's parts, copying the body first when another
// message shares it.
func (s *Store) rewriteBody(ctx context.Context, tx *sql.Tx, m *loom.Message) error {
	parts, err := marshalParts(m)
	if err != nil {
		return err
	}
	var body int64
	var shared bool
	if err := tx.QueryRowContext(ctx, `SELECT body_id, EXISTS (SELECT 1 FROM messages o WHERE o.body_id = m.body_id AND (o.session_id <> m.session_id OR o.seq <> m.seq))
		FROM messages m WHERE session_id = ? AND seq = ?`, m.SessionID, m.Seq).Scan(&body, &shared); err != nil {
		return fmt.Errorf("update message %d: %w", m.Seq, err)
	}
	if shared {
		res, err := tx.ExecContext(ctx, `INSERT INTO bodies (parts, content) VALUES (?, ?)`, parts, m.SearchText())
		if err != nil {
			return fmt.Errorf("update message %d: %w", m.Seq, err)
		}
		nb, _ := res.LastInsertId()
		_, err = tx.ExecContext(ctx, `UPDATE messages SET body_id = ? WHERE session_id = ? AND seq = ?`, nb, m.SessionID, m.Seq)
		if err != nil {
			return fmt.Errorf("update message %d: %w", m.Seq, err)
		}
	} else if _, err := tx.ExecContext(ctx, `UPDATE bodies SET parts = ?, content = ? WHERE id = ?`, parts, m.SearchText(), body); err != nil {
		return fmt.Errorf("update message %d: %w", m.Seq, err)
	}
	_, err = tx.ExecContext(ctx, `UPDATE sessions SET updated_at = ? WHERE id = ?`, s.now(), m.SessionID)
	return err
}

// RepairInterrupted implements loom.Store. Only the last turn can hold an
// unfinished tool call (every turn is repaired before the next starts), so
// it reads backwards to the last user message.
func (s *Store) RepairInterrupted(ctx context.Context, sessionID string) (int, error) {
	// Almost always there is nothing to repair: find out on a reader,
	// without taking the write lock.
	if _, n, err := s.unfinished(ctx, reads{s}, sessionID); err != nil || n == 0 {
		return 0, err
	}
	repaired := 0
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		if err := s.checkWriter(ctx, tx, sessionID); err != nil {
			return err
		}
		// Again inside the transaction: another writer may have finished
		// or repaired them meanwhile.
		broken, n, err := s.unfinished(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		for _, m := range broken {
			if err := s.rewriteBody(ctx, tx, m); err != nil {
				return err
			}
		}
		repaired = n
		return nil
	})
	return repaired, err
}

// unfinished reads the session's last turn backwards to its user message
// and returns its messages with unfinished tool parts, already repaired
// in memory, and how many parts that repaired.
func (s *Store) unfinished(ctx context.Context, db queryer, sessionID string) ([]*loom.Message, int, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+messageColumns+messageFrom+`WHERE m.session_id = ? ORDER BY m.seq DESC`, sessionID)
	if err != nil {
		return nil, 0, fmt.Errorf("repair %s: %w", sessionID, err)
	}
	defer rows.Close()
	var broken []*loom.Message
	repaired := 0
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("repair %s: %w", sessionID, err)
		}
		if m.Role == loom.RoleUser {
			break
		}
		if n := m.RepairInterrupted(s.Now()); n > 0 {
			repaired += n
			broken = append(broken, m)
		}
	}
	return broken, repaired, rows.Err()
}
