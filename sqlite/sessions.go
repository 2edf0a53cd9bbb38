package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/loomhq/loom"
)

const sessionColumns = `s.id, s.user_id, s.key, s.surface, s.title, s.description, s.kind,
	s.parent_id, s.fork_turn, s.project_id, s.project_name, s.project_root, s.cwd,
	s.model, s.provider, s.profile, s.message_count, s.turn_count, s.summary_seq,
	s.last_prompt, s.input_tokens, s.output_tokens, s.reasoning_tokens,
	s.cache_read_tokens, s.cache_write_tokens, s.cost_usd, s.api_calls,
	s.compactions, s.created_at, s.updated_at, s.deleted_at,
	l.owner, l.pid, l.host, l.since, l.expires_at`

const sessionFrom = ` FROM sessions s LEFT JOIN locks l ON l.session_id = s.id `

type scanner interface{ Scan(...any) error }

func (s *Store) scanSession(row scanner) (*loom.Session, error) {
	var (
		x                          loom.Session
		key, parent                sql.NullString
		created, updated, deleted  sql.NullString
		owner, host, since, expiry sql.NullString
		pid                        sql.NullInt64
	)
	err := row.Scan(&x.ID, &x.UserID, &key, &x.Surface, &x.Title, &x.Description, &x.Kind,
		&parent, &x.ForkTurn, &x.Project.ID, &x.Project.Name, &x.Project.Root, &x.Cwd,
		&x.Model, &x.Provider, &x.Profile, &x.MessageCount, &x.TurnCount, &x.SummarySeq,
		&x.LastPrompt, &x.Usage.InputTokens, &x.Usage.OutputTokens, &x.Usage.ReasoningTokens,
		&x.Usage.CacheReadTokens, &x.Usage.CacheWriteTokens, &x.Usage.CostUSD, &x.Usage.APICalls,
		&x.Usage.Compactions, &created, &updated, &deleted,
		&owner, &pid, &host, &since, &expiry)
	if err != nil {
		return nil, err
	}
	x.Key, x.ParentID = key.String, parent.String
	x.CreatedAt, x.UpdatedAt, x.DeletedAt = parseTime(created), parseTime(updated), optTime(deleted)
	if owner.Valid {
		l := &loom.Lock{Owner: owner.String, PID: int(pid.Int64), Host: host.String, Since: parseTime(since), Expires: parseTime(expiry)}
		if s.lockLive(l) {
			x.Lock = l
		}
	}
	return &x, nil
}

func (s *Store) querySessions(ctx context.Context, db queryer, where string, args ...any) ([]*loom.Session, error) {
	return s.querySessionsWith(ctx, db, `SELECT `+sessionColumns+sessionFrom+where, args...)
}

// querySessionsWith runs a whole query that selects sessionColumns.
func (s *Store) querySessionsWith(ctx context.Context, db queryer, query string, args ...any) ([]*loom.Session, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []*loom.Session
	for rows.Next() {
		x, err := s.scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Session implements loom.Store.
func (s *Store) Session(ctx context.Context, id string) (*loom.Session, error) {
	return s.sessionTx(ctx, reads{s}, id)
}

func (s *Store) sessionTx(ctx context.Context, db queryer, id string) (*loom.Session, error) {
	x, err := s.scanSession(db.QueryRowContext(ctx, sessionByIDSQL, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, loom.NotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", id, err)
	}
	return x, nil
}

// Sessions implements loom.Store.
func (s *Store) Sessions(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error) {
	var where []string
	var args []any
	add := func(cond string, a ...any) { where = append(where, cond); args = append(args, a...) }
	if f.UserID != "" {
		add("s.user_id = ?", f.UserID)
	}
	if f.Deleted {
		add("s.deleted_at IS NOT NULL")
	} else {
		add("s.deleted_at IS NULL")
	}
	if f.ProjectID != "" {
		add("s.project_id = ?", f.ProjectID)
	}
	if f.ProjectName != "" {
		add("s.project_name = ?", f.ProjectName)
	}
	if f.Surface != "" {
		add("s.surface = ?", f.Surface)
	}
	if f.Key != "" {
		add("s.key = ?", f.Key)
	}
	if f.ParentID != "" {
		add("s.parent_id = ?", f.ParentID)
	}
	if f.Kind != "" {
		add("s.kind = ?", f.Kind)
	}
	if !f.UpdatedBefore.IsZero() {
		add("s.updated_at < ?", loom.FormatTime(f.UpdatedBefore))
	}
	if f.Before != nil {
		t := loom.FormatTime(f.Before.UpdatedAt)
		add("(s.updated_at < ? OR (s.updated_at = ? AND s.id < ?))", t, t, f.Before.ID)
	}
	q := "WHERE " + strings.Join(where, " AND ") + " ORDER BY s.updated_at DESC, s.id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return s.querySessions(ctx, reads{s}, q, args...)
}

// Resolve implements loom.Store with the order of loom.ResolveWith.
func (s *Store) Resolve(ctx context.Context, ref string, scope loom.ResolveScope) (*loom.Session, error) {
	cond := []string{"s.deleted_at IS NULL"}
	if scope.Deleted {
		cond[0] = "s.deleted_at IS NOT NULL"
	}
	var args []any
	if scope.UserID != "" {
		cond = append(cond, "s.user_id = ?")
		args = append(args, scope.UserID)
	}
	return loom.ResolveWith(ref, scope, func(by loom.Lookup, v string) ([]*loom.Session, error) {
		var q string
		a := append([]any{}, args...)
		switch by {
		case loom.ByID:
			q, a = "s.id = ?", append(a, v)
		case loom.ByPrefix:
			// Ids are lowercase hex and dashes, so the range
			// [prefix, prefix+"~") holds exactly the ids that start with it.
			q, a = "s.id >= ? AND s.id < ?", append(a, v, v+"~")
		case loom.ByKey:
			q, a = "s.key = ?", append(a, v)
		case loom.ByTitle:
			q, a = "s.title = ? COLLATE NOCASE", append(a, v)
		}
		return s.querySessions(ctx, reads{s},
			"WHERE "+strings.Join(append(cond, q), " AND ")+" ORDER BY s.updated_at DESC, s.id DESC LIMIT 20", a...)
	})
}

// UpdateSession implements loom.Store.
func (s *Store) UpdateSession(ctx context.Context, id string, u loom.SessionUpdate) (*loom.Session, error) {
	var out *loom.Session
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		cur, err := s.sessionTx(ctx, tx, id)
		if err != nil {
			return err
		}
		var sets []string
		var args []any
		set := func(col string, v any) { sets = append(sets, col+" = ?"); args = append(args, v) }
		if u.Title != nil {
			set("title", strings.TrimSpace(*u.Title))
		}
		if u.Description != nil {
			set("description", *u.Description)
		}
		if u.Key != nil {
			set("key", nullString(*u.Key))
			if *u.Key != "" {
				set("surface", loom.SurfaceOf(*u.Key))
			}
		}
		if u.Project != nil {
			set("project_id", u.Project.ID)
			set("project_name", u.Project.Name)
			set("project_root", u.Project.Root)
		}
		if u.Cwd != nil {
			set("cwd", *u.Cwd)
		}
		if u.Model != nil {
			set("model", *u.Model)
		}
		if u.Provider != nil {
			set("provider", *u.Provider)
		}
		if u.Profile != nil {
			set("profile", *u.Profile)
		}
		if len(sets) > 0 {
			set("updated_at", s.now())
			args = append(args, cur.ID)
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET `+strings.Join(sets, ", ")+` WHERE id = ?`, args...); err != nil {
				if isUnique(err) {
					return loom.Errorf(loom.ECONFLICT, "another session already has that key in that project")
				}
				return fmt.Errorf("update session %s: %w", id, err)
			}
		}
		out, err = s.sessionTx(ctx, tx, cur.ID)
		return err
	})
	return out, err
}

func isUnique(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}
