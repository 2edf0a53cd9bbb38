package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
)

// insertMessageSQL stores a message and its body in one statement, under
// the store where its session stores its own (see sqlstore.Span).
const insertMessageSQL = `WITH b AS (INSERT INTO bodies (parts, content) VALUES ($1, $2) RETURNING id)
	INSERT INTO messages (session_id, seq, id, role, turn, body_id, model, provider,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
		cost_usd, api_calls, compactions, error, created_at, completed_at)
	SELECT coalesce((SELECT store_id FROM spans WHERE session_id = $3 ORDER BY first_seq DESC LIMIT 1), $3), $4, $5, $6, $7, b.id, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20 FROM b`

// Append implements loom.Store. The session row is locked for the whole
// transaction, so writers from any number of processes keep seq gap-free.
func (s *Store) Append(ctx context.Context, x *loom.Session, msgs ...*loom.Message) error {
	if err := sqlstore.PrepareAppend(x, msgs); err != nil {
		return err
	}
	var fresh *loom.Session
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		st, err := s.beginWrite(ctx, tx, x.ID)
		if err != nil {
			return err
		}
		if err := sqlstore.CheckAppend(x, st.cur, s.holder.Owner); err != nil {
			return err
		}
		if st.cur == nil {
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
			if st.cur == nil {
				return fmt.Errorf("append to %s: the session row is missing after its creation", x.ID)
			}
			if err := sqlstore.CheckAppend(x, st.cur, s.holder.Owner); err != nil {
				return err
			}
		}
		fresh = st.cur
		if len(msgs) == 0 {
			return nil
		}
		fresh.ApplyAppend(ms(s.Now()), msgs...)
		fresh.LastPrompt, fresh.Title = clean(fresh.LastPrompt), clean(fresh.Title)
		b := &pgx.Batch{}
		for _, m := range msgs {
			args, err := messageArgs(m)
			if err != nil {
				return err
			}
			b.Queue(insertMessageSQL, args...)
		}
		u := fresh.Usage
		b.Queue(`UPDATE sessions SET message_count = $1, turn_count = $2, last_prompt = $3, title = $4,
			summary_seq = $5, input_tokens = $6, output_tokens = $7, reasoning_tokens = $8,
			cache_read_tokens = $9, cache_write_tokens = $10, cost_usd = $11, api_calls = $12,
			compactions = $13, updated_at = $14, archived_at = NULL WHERE id = $15`,
			fresh.MessageCount, fresh.TurnCount, fresh.LastPrompt, fresh.Title, fresh.SummarySeq,
			u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens,
			u.CacheWriteTokens, u.CostUSD, u.APICalls, u.Compactions, ms(fresh.UpdatedAt), x.ID)
		br := tx.SendBatch(ctx, b)
		defer br.Close()
		for range b.Len() {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("append to %s: %w", x.ID, err)
			}
		}
		return br.Close()
	})
	if err != nil {
		return err
	}
	*x = *fresh
	return nil
}

// createSession inserts the row of session x, created by its first
// message. A row with the same id that appeared meanwhile is left alone;
// a live session with the same key is a conflict.
func (s *Store) createSession(ctx context.Context, tx pgx.Tx, x *loom.Session) error {
	row, err := x.Created(ms(s.Now()))
	if err != nil {
		return err
	}
	tool, version, path := sqlstore.SourceColumns(row)
	_, err = tx.Exec(ctx, `INSERT INTO sessions (id, user_id, key, surface, title,
		description, kind, parent_id, fork_turn, project_id, project_name, project_root, cwd,
		model, provider, profile, created_at, updated_at, git_branch, source_tool, source_version,
		source_path)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
			$19, $20, $21, $22)
		ON CONFLICT (id) DO NOTHING`,
		row.ID, row.UserID, nullString(row.Key), row.Surface, row.Title, row.Description, row.Kind,
		nullString(row.ParentID), row.ForkTurn, row.Project.ID, row.Project.Name, row.Project.Root, row.Cwd,
		row.Model, row.Provider, row.Profile, ms(row.CreatedAt), ms(row.UpdatedAt),
		clean(row.GitBranch), clean(tool), clean(version), clean(path))
	if isUnique(err) {
		return loom.Errorf(loom.ECONFLICT, "a session with key %q already exists", row.Key)
	}
	if err != nil {
		return fmt.Errorf("create session %s: %w", row.ID, err)
	}
	return nil
}

// messageArgs are the arguments of insertMessageSQL for m.
func messageArgs(m *loom.Message) ([]any, error) {
	parts, err := sqlstore.EncodeParts(m)
	if err != nil {
		return nil, err
	}
	u := m.Usage
	return []any{parts, clean(m.SearchText()),
		m.SessionID, m.Seq, m.ID, m.Role, m.Turn, m.Model, m.Provider,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens,
		u.CostUSD, u.APICalls, u.Compactions, sqlstore.EncodeError(m.Error), ms(m.CreatedAt), nullTime(m.CompletedAt)}, nil
}

// Messages implements loom.Store. The newest-N read walks each span's
// rows backwards from its end (see spanNewest), so its cost does not
// grow with the session, nor with its ancestors' when it is a fork.
func (s *Store) Messages(ctx context.Context, sessionID string, q loom.MessageQuery) ([]*loom.Message, error) {
	if !storable(sessionID) {
		return nil, nil
	}
	lo, hi := int64(1), sqlstore.OpenSeq
	if q.After > 0 {
		lo = q.After + 1
	}
	if q.Before > 0 {
		hi = q.Before - 1
	}
	cond, args := "", []any(nil)
	if q.Turn > 0 {
		cond, args = " AND m.turn = $4", []any{q.Turn}
	}
	if q.Limit <= 0 {
		return spanMessages(ctx, s.pool, sessionID, lo, hi, cond, 0, false, args...)
	}
	msgs, err := spanMessages(ctx, s.pool, sessionID, lo, hi, cond, q.Limit, q.Oldest, args...)
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
	return spanMessages(ctx, s.pool, sessionID, max(from, 1), sqlstore.OpenSeq, "", 0, false)
}

// UpdatePart implements loom.Store. A message the session inherits (a
// fork's from its parent) is copied into the session first, and a body
// shared with another message is copied before it is changed, so the
// update never changes another session's history.
func (s *Store) UpdatePart(ctx context.Context, sessionID string, seq int64, part loom.Part) error {
	if err := part.Validate(); err != nil {
		return err
	}
	return s.withTx(ctx, func(tx pgx.Tx) error {
		m, err := s.messageForUpdate(ctx, tx, sessionID, seq)
		if err != nil {
			return err
		}
		if err := sqlstore.ReplacePart(m, sessionID, seq, part); err != nil {
			return err
		}
		return s.rewriteBody(ctx, tx, m)
	})
}

// UpdateUsage implements loom.Store.
func (s *Store) UpdateUsage(ctx context.Context, sessionID string, seq int64, u loom.Usage) error {
	return s.withTx(ctx, func(tx pgx.Tx) error {
		if err := s.beginUpdate(ctx, tx, sessionID); err != nil {
			return err
		}
		var old loom.Usage
		err := tx.QueryRow(ctx, `SELECT input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
			cache_write_tokens, cost_usd, api_calls, compactions FROM messages WHERE session_id = $1 AND seq = $2 FOR UPDATE`, sessionID, seq).Scan(
			&old.InputTokens, &old.OutputTokens, &old.ReasoningTokens, &old.CacheReadTokens,
			&old.CacheWriteTokens, &old.CostUSD, &old.APICalls, &old.Compactions)
		if errors.Is(err, pgx.ErrNoRows) {
			return loom.Errorf(loom.ENOTFOUND, "session %s stores no message %d of its own", sessionID, seq)
		}
		if err != nil {
			return fmt.Errorf("read usage of message %d: %w", seq, err)
		}
		d := u
		d.Sub(old)
		b := &pgx.Batch{}
		b.Queue(`UPDATE messages SET input_tokens = $1, output_tokens = $2, reasoning_tokens = $3,
			cache_read_tokens = $4, cache_write_tokens = $5, cost_usd = $6, api_calls = $7, compactions = $8
			WHERE session_id = $9 AND seq = $10`,
			u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CostUSD, u.APICalls, u.Compactions,
			sessionID, seq)
		b.Queue(`UPDATE sessions SET input_tokens = input_tokens + $1, output_tokens = output_tokens + $2,
			reasoning_tokens = reasoning_tokens + $3, cache_read_tokens = cache_read_tokens + $4,
			cache_write_tokens = cache_write_tokens + $5, cost_usd = cost_usd + $6, api_calls = api_calls + $7,
			compactions = compactions + $8 WHERE id = $9`,
			d.InputTokens, d.OutputTokens, d.ReasoningTokens, d.CacheReadTokens, d.CacheWriteTokens, d.CostUSD, d.APICalls, d.Compactions, sessionID)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("update usage of message %d of %s: %w", seq, sessionID, err)
		}
		return nil
	})
}

// messageForUpdate holds the session for writing (beginUpdate) and reads
// its message seq, nil when there is none.
func (s *Store) messageForUpdate(ctx context.Context, tx pgx.Tx, sessionID string, seq int64) (*loom.Message, error) {
	if err := s.beginUpdate(ctx, tx, sessionID); err != nil {
		return nil, err
	}
	msgs, err := spanMessages(ctx, tx, sessionID, seq, seq, "", 0, false)
	if err != nil || len(msgs) == 0 {
		return nil, err
	}
	return msgs[0], nil
}

// rewriteBody stores m's parts as sqlstore.WriteMessageWith says: a copy
// for the session when it inherits m, copies as it was for the sessions
// that read it when the session stores it, and a body of its own when
// another row shares its body. A fork that could start sharing it
// meanwhile waits on the session row that beginWrite locked.
func (s *Store) rewriteBody(ctx context.Context, tx pgx.Tx, m *loom.Message) error {
	parts, err := sqlstore.EncodeParts(m)
	if err != nil {
		return err
	}
	content := clean(m.SearchText())
	err = sqlstore.WriteMessageWith(m.SessionID, m.Seq, sqlstore.MessageWriteSteps{
		Spans: func(id string) ([]sqlstore.Span, error) { return readSpans(ctx, tx, id) },
		Readers: func(store string, seq int64, id string) ([]string, error) {
			rows, err := tx.Query(ctx, `SELECT DISTINCT session_id FROM spans
				WHERE store_id = $1 AND first_seq <= $2 AND last_seq >= $2 AND session_id <> $3`, store, seq, id)
			if err != nil {
				return nil, err
			}
			return pgx.CollectRows(rows, pgx.RowTo[string])
		},
		Copy: func(to, from string, seq int64, withParts bool) error {
			_, err := tx.Exec(ctx, `WITH b AS (INSERT INTO bodies (parts, content) SELECT $5, $6 WHERE $4::boolean RETURNING id) `+copyRowSQL,
				to, from, seq, withParts, parts, content)
			return err
		},
		WriteSpans: func(id string, spans []sqlstore.Span) error { return writeSpans(ctx, tx, id, spans) },
		DropUnread: func(store string, seq int64) error { return dropUnread(ctx, tx, store, seq) },
		Rewrite: func(store string, seq int64) error {
			var body int64
			var shared bool
			if err := tx.QueryRow(ctx, `SELECT body_id, EXISTS (SELECT 1 FROM messages o WHERE o.body_id = m.body_id AND (o.session_id <> m.session_id OR o.seq <> m.seq))
				FROM messages m WHERE session_id = $1 AND seq = $2`, store, seq).Scan(&body, &shared); err != nil {
				return err
			}
			if shared {
				_, err = tx.Exec(ctx, `WITH b AS (INSERT INTO bodies (parts, content) VALUES ($1, $2) RETURNING id)
					UPDATE messages SET body_id = (SELECT id FROM b) WHERE session_id = $3 AND seq = $4`,
					parts, content, store, seq)
			} else {
				_, err = tx.Exec(ctx, `UPDATE bodies SET parts = $1, content = $2 WHERE id = $3`, parts, content, body)
			}
			return err
		},
	})
	if err != nil {
		return fmt.Errorf("update message %d: %w", m.Seq, err)
	}
	// An imported session is as recent as its source's messages, not as
	// the import that completed one of them (loom.Session.ApplyAppend).
	_, err = tx.Exec(ctx, `UPDATE sessions SET updated_at = $1 WHERE id = $2 AND source_tool = ''`, ms(s.Now()), m.SessionID)
	return err
}

// copyRowSQL copies row $3 of store $2 to store $1: with the body that a
// WITH b before it inserted when $4, else sharing the row's body.
const copyRowSQL = `INSERT INTO messages (session_id, seq, id, role, turn, body_id,
		model, provider, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
		cache_write_tokens, cost_usd, api_calls, compactions, error, created_at, completed_at)
	SELECT $1, seq, id, role, turn, CASE WHEN $4::boolean THEN (SELECT id FROM b) ELSE body_id END, model, provider,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, cost_usd,
		api_calls, compactions, error, created_at, completed_at
	FROM messages WHERE session_id = $2 AND seq = $3`

// RepairInterrupted implements loom.Store. Only the last turn can hold an
// unfinished tool call (every turn is repaired before the next starts), so
// it reads the messages after the last user message.
func (s *Store) RepairInterrupted(ctx context.Context, sessionID string) (int, error) {
	repaired := 0
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		if err := s.beginUpdate(ctx, tx, sessionID); err != nil {
			return err
		}
		users, err := spanMessages(ctx, tx, sessionID, 1, sqlstore.OpenSeq, " AND m.role = 'user'", 1, false)
		if err != nil {
			return fmt.Errorf("repair %s: %w", sessionID, err)
		}
		from := int64(1)
		if len(users) > 0 {
			from = users[0].Seq + 1
		}
		msgs, err := spanMessages(ctx, tx, sessionID, from, sqlstore.OpenSeq, "", 0, false)
		if err != nil {
			return fmt.Errorf("repair %s: %w", sessionID, err)
		}
		slices.Reverse(msgs)
		r := sqlstore.NewRepair(s.Now())
		for _, m := range msgs {
			r.Add(m)
		}
		for _, m := range r.Messages {
			if err := s.rewriteBody(ctx, tx, m); err != nil {
				return err
			}
		}
		repaired = r.Parts
		return nil
	})
	if err != nil {
		return 0, err
	}
	return repaired, nil
}
