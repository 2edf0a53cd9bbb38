package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
)

// insertMessageSQL stores a message and its body in one statement.
const insertMessageSQL = `WITH b AS (INSERT INTO bodies (parts, content) VALUES ($1, $2) RETURNING id)
	INSERT INTO messages (session_id, seq, id, role, turn, body_id, model, provider,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
		cost_usd, api_calls, compactions, error, created_at, completed_at)
	SELECT $3, $4, $5, $6, $7, b.id, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20 FROM b`

// Append implements loom.Store. The session row is locked for the whole
// transaction, so writers from any number of processes keep seq gap-free.
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
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		st, err := s.beginWrite(ctx, tx, x.ID)
		if err != nil {
			return err
		}
		switch {
		case !st.exists:
			// A session the caller already wrote to has been deleted
			// meanwhile: never bring it back with half its history.
			if x.MessageCount > 0 {
				return loom.Errorf(loom.ENOTFOUND, "session %s was deleted", x.ID)
			}
			if err := st.check(x.ID); err != nil {
				return err
			}
			if err := s.createSession(ctx, tx, x); err != nil {
				return err
			}
			// Another writer (an import, a fork with this id) may have
			// created it first: read what is there now.
			if st, err = s.beginWrite(ctx, tx, x.ID); err != nil {
				return err
			}
			if st.deleted {
				return loom.Errorf(loom.ENOTFOUND, "session %s is in the trash", x.ID)
			}
			if err := st.check(x.ID); err != nil {
				return err
			}
		case st.deleted:
			return loom.Errorf(loom.ENOTFOUND, "session %s is in the trash", x.ID)
		default:
			if err := st.check(x.ID); err != nil {
				return err
			}
		}
		b := &pgx.Batch{}
		if len(msgs) > 0 {
			count, turns := st.count, st.turns
			now := s.Now()
			var add loom.Usage
			var prompt, firstPrompt string
			var summary int64
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
				args, err := messageArgs(m)
				if err != nil {
					return err
				}
				b.Queue(insertMessageSQL, args...)
				add.Add(m.Usage)
			}
			prompt, firstPrompt = clean(prompt), clean(firstPrompt)
			// A title comes from the first prompt ever, never a later one.
			b.Queue(`UPDATE sessions SET
				message_count = $1, turn_count = $2,
				last_prompt = CASE WHEN $3::text = '' THEN last_prompt ELSE $4::text END,
				title = CASE WHEN title = '' THEN $5::text ELSE title END,
				summary_seq = greatest(summary_seq, $6::bigint),
				input_tokens = input_tokens + $7, output_tokens = output_tokens + $8,
				reasoning_tokens = reasoning_tokens + $9, cache_read_tokens = cache_read_tokens + $10,
				cache_write_tokens = cache_write_tokens + $11, cost_usd = cost_usd + $12,
				api_calls = api_calls + $13, compactions = compactions + $14,
				updated_at = $15
				WHERE id = $16`,
				count, turns, prompt, loom.Truncate(prompt, loom.MaxPrompt), loom.TitleFrom(firstPrompt), summary,
				add.InputTokens, add.OutputTokens, add.ReasoningTokens, add.CacheReadTokens,
				add.CacheWriteTokens, add.CostUSD, add.APICalls, add.Compactions,
				ms(now), x.ID)
		}
		b.Queue(`SELECT `+sessionColumns+sessionFrom+`WHERE s.id = $1`, x.ID)
		br := tx.SendBatch(ctx, b)
		defer br.Close()
		for i := 0; i < b.Len()-1; i++ {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("append to %s: %w", x.ID, err)
			}
		}
		if fresh, err = s.scanSession(br.QueryRow()); err != nil {
			return fmt.Errorf("append to %s: %w", x.ID, err)
		}
		return br.Close()
	})
	if err != nil {
		return err
	}
	*x = *fresh
	return nil
}

// createSession inserts the row of a session created by its first
// message. A row with the same id that appeared meanwhile is left alone;
// a live session with the same key is a conflict.
func (s *Store) createSession(ctx context.Context, tx pgx.Tx, x *loom.Session) error {
	if x.Kind == "" {
		x.Kind = loom.KindMain
	}
	if x.Surface == "" && x.Key != "" {
		x.Surface = loom.SurfaceOf(x.Key)
	}
	if err := x.Validate(); err != nil {
		return err
	}
	now := ms(s.Now())
	created := now
	if !x.CreatedAt.IsZero() {
		created = ms(x.CreatedAt)
	}
	_, err := tx.Exec(ctx, `INSERT INTO sessions (id, user_id, key, surface, title,
		description, kind, parent_id, fork_turn, project_id, project_name, project_root, cwd,
		model, provider, profile, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
		ON CONFLICT (id) DO NOTHING`,
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

// messageArgs are the arguments of insertMessageSQL for m.
func messageArgs(m *loom.Message) ([]any, error) {
	parts, err := marshalParts(m)
	if err != nil {
		return nil, err
	}
	var errText any
	if m.Error != nil {
		errText = marshalError(m.Error)
	}
	u := m.Usage
	return []any{parts, clean(m.SearchText()),
		m.SessionID, m.Seq, m.ID, m.Role, m.Turn, m.Model, m.Provider,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens,
		u.CostUSD, u.APICalls, u.Compactions, errText, ms(m.CreatedAt), nullTime(m.CompletedAt)}, nil
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
	b, err := json.Marshal(m.Parts)
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

func scanMessage(row pgx.Row) (*loom.Message, error) {
	var (
		m              loom.Message
		parts, errText []byte
		completed      *time.Time
	)
	err := row.Scan(&m.SessionID, &m.Seq, &m.ID, &m.Role, &m.Turn, &parts, &m.Model, &m.Provider,
		&m.Usage.InputTokens, &m.Usage.OutputTokens, &m.Usage.ReasoningTokens, &m.Usage.CacheReadTokens,
		&m.Usage.CacheWriteTokens, &m.Usage.CostUSD, &m.Usage.APICalls, &m.Usage.Compactions, &errText,
		&m.CreatedAt, &completed)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(parts, &m.Parts); err != nil {
		return nil, fmt.Errorf("message %d of %s: parts: %w", m.Seq, m.SessionID, err)
	}
	if errText != nil {
		m.Error = &loom.MessageError{}
		if json.Unmarshal(errText, m.Error) != nil {
			m.Error.Message = string(errText)
		}
	}
	m.CreatedAt, m.CompletedAt = utc(m.CreatedAt), optTime(completed)
	return &m, nil
}

func queryMessages(ctx context.Context, db querier, q string, args ...any) ([]*loom.Message, error) {
	rows, err := db.Query(ctx, `SELECT `+messageColumns+messageFrom+q, args...)
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
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	return out, nil
}

// Messages implements loom.Store. The newest-N read walks the primary key
// backwards from its end, so its cost does not grow with the session.
func (s *Store) Messages(ctx context.Context, sessionID string, q loom.MessageQuery) ([]*loom.Message, error) {
	if !storable(sessionID) {
		return nil, nil
	}
	where := "WHERE m.session_id = $1"
	args := []any{sessionID}
	if q.Before > 0 {
		args = append(args, q.Before)
		where += fmt.Sprintf(" AND m.seq < $%d", len(args))
	}
	if q.After > 0 {
		args = append(args, q.After)
		where += fmt.Sprintf(" AND m.seq > $%d", len(args))
	}
	if q.Limit <= 0 {
		return queryMessages(ctx, s.pool, where+" ORDER BY m.seq", args...)
	}
	msgs, err := queryMessages(ctx, s.pool, where+fmt.Sprintf(" ORDER BY m.seq DESC LIMIT %d", q.Limit), args...)
	slices.Reverse(msgs)
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
	return queryMessages(ctx, s.pool, "WHERE m.session_id = $1 AND m.seq >= $2 ORDER BY m.seq", sessionID, from)
}

// UpdatePart implements loom.Store. A body shared with a fork is copied
// first, so the update never changes the other session's history.
func (s *Store) UpdatePart(ctx context.Context, sessionID string, seq int64, part loom.Part) error {
	if err := part.Validate(); err != nil {
		return err
	}
	return s.withTx(ctx, func(tx pgx.Tx) error {
		if err := s.beginUpdate(ctx, tx, sessionID); err != nil {
			return err
		}
		msgs, err := queryMessages(ctx, tx, "WHERE m.session_id = $1 AND m.seq = $2", sessionID, seq)
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
// message shares it. A fork that could start sharing it meanwhile waits
// on the session row that beginWrite locked.
func (s *Store) rewriteBody(ctx context.Context, tx pgx.Tx, m *loom.Message) error {
	parts, err := marshalParts(m)
	if err != nil {
		return err
	}
	content := clean(m.SearchText())
	var body int64
	var shared bool
	if err := tx.QueryRow(ctx, `SELECT body_id, EXISTS (SELECT 1 FROM messages o WHERE o.body_id = m.body_id AND (o.session_id <> m.session_id OR o.seq <> m.seq))
		FROM messages m WHERE session_id = $1 AND seq = $2`, m.SessionID, m.Seq).Scan(&body, &shared); err != nil {
		return fmt.Errorf("update message %d: %w", m.Seq, err)
	}
	if shared {
		_, err = tx.Exec(ctx, `WITH b AS (INSERT INTO bodies (parts, content) VALUES ($1, $2) RETURNING id)
			UPDATE messages SET body_id = (SELECT id FROM b) WHERE session_id = $3 AND seq = $4`,
			parts, content, m.SessionID, m.Seq)
	} else {
		_, err = tx.Exec(ctx, `UPDATE bodies SET parts = $1, content = $2 WHERE id = $3`, parts, content, body)
	}
	if err != nil {
		return fmt.Errorf("update message %d: %w", m.Seq, err)
	}
	_, err = tx.Exec(ctx, `UPDATE sessions SET updated_at = $1 WHERE id = $2`, ms(s.Now()), m.SessionID)
	return err
}

// RepairInterrupted implements loom.Store. Only the last turn can hold an
// unfinished tool call (every turn is repaired before the next starts), so
// it reads the messages after the last user message.
func (s *Store) RepairInterrupted(ctx context.Context, sessionID string) (int, error) {
	repaired := 0
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		if err := s.beginUpdate(ctx, tx, sessionID); err != nil {
			return err
		}
		msgs, err := queryMessages(ctx, tx, `WHERE m.session_id = $1 AND m.seq > coalesce(
			(SELECT max(seq) FROM messages WHERE session_id = $1 AND role = 'user'), 0) ORDER BY m.seq DESC`, sessionID)
		if err != nil {
			return fmt.Errorf("repair %s: %w", sessionID, err)
		}
		for _, m := range msgs {
			if n := m.RepairInterrupted(s.Now()); n > 0 {
				repaired += n
				if err := s.rewriteBody(ctx, tx, m); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return repaired, nil
}
