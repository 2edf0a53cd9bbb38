package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

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

func (s *Store) scanSession(row pgx.Row) (*loom.Session, error) {
	var (
		x             loom.Session
		key, parent   *string
		deleted       *time.Time
		owner, host   *string
		pid           *int
		since, expiry *time.Time
	)
	err := row.Scan(&x.ID, &x.UserID, &key, &x.Surface, &x.Title, &x.Description, &x.Kind,
		&parent, &x.ForkTurn, &x.Project.ID, &x.Project.Name, &x.Project.Root, &x.Cwd,
		&x.Model, &x.Provider, &x.Profile, &x.MessageCount, &x.TurnCount, &x.SummarySeq,
		&x.LastPrompt, &x.Usage.InputTokens, &x.Usage.OutputTokens, &x.Usage.ReasoningTokens,
		&x.Usage.CacheReadTokens, &x.Usage.CacheWriteTokens, &x.Usage.CostUSD, &x.Usage.APICalls,
		&x.Usage.Compactions, &x.CreatedAt, &x.UpdatedAt, &deleted,
		&owner, &pid, &host, &since, &expiry)
	if err != nil {
		return nil, err
	}
	x.Key, x.ParentID = deref(key), deref(parent)
	x.CreatedAt, x.UpdatedAt, x.DeletedAt = utc(x.CreatedAt), utc(x.UpdatedAt), optTime(deleted)
	if owner != nil && pid != nil && since != nil && expiry != nil {
		l := &loom.Lock{Owner: *owner, PID: *pid, Host: deref(host), Since: since.UTC(), Expires: expiry.UTC()}
		if s.lockLive(l) {
			x.Lock = l
		}
	}
	return &x, nil
}

func (s *Store) querySessions(ctx context.Context, db querier, where string, args ...any) ([]*loom.Session, error) {
	return s.querySessionsWith(ctx, db, `SELECT `+sessionColumns+sessionFrom+where, args...)
}

// querySessionsWith runs a whole query that selects sessionColumns.
func (s *Store) querySessionsWith(ctx context.Context, db querier, query string, args ...any) ([]*loom.Session, error) {
	rows, err := db.Query(ctx, query, args...)
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
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// Session implements loom.Store.
func (s *Store) Session(ctx context.Context, id string) (*loom.Session, error) {
	return s.sessionTx(ctx, s.pool, id, "")
}

// sessionTx reads one session; lock, when set, is a row-locking clause
// such as FOR SHARE OF s.
func (s *Store) sessionTx(ctx context.Context, db querier, id, lock string) (*loom.Session, error) {
	if !storable(id) {
		return nil, loom.NotFound(id)
	}
	x, err := s.scanSession(db.QueryRow(ctx, `SELECT `+sessionColumns+sessionFrom+`WHERE s.id = $1 `+lock, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, loom.NotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", id, err)
	}
	return x, nil
}

// conds builds a WHERE clause with numbered placeholders.
type conds struct {
	where []string
	args  []any
}

// add appends cond, in which each ? stands for the next of a.
func (c *conds) add(cond string, a ...any) {
	for _, v := range a {
		c.args = append(c.args, v)
		cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(c.args)), 1)
	}
	c.where = append(c.where, cond)
}

func (c *conds) String() string {
	if len(c.where) == 0 {
		return "TRUE"
	}
	return strings.Join(c.where, " AND ")
}

// Sessions implements loom.Store.
func (s *Store) Sessions(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error) {
	if !storable(f.UserID, f.ProjectID, f.ProjectName, f.Surface, f.Key, f.ParentID, f.Kind) || (f.Before != nil && !storable(f.Before.ID)) {
		return nil, nil
	}
	var c conds
	if f.UserID != "" {
		c.add("s.user_id = ?", f.UserID)
	}
	if f.Deleted {
		c.add("s.deleted_at IS NOT NULL")
	} else {
		c.add("s.deleted_at IS NULL")
	}
	if f.ProjectID != "" {
		c.add("s.project_id = ?", f.ProjectID)
	}
	if f.ProjectName != "" {
		c.add("s.project_name = ?", f.ProjectName)
	}
	if f.Surface != "" {
		c.add("s.surface = ?", f.Surface)
	}
	if f.Key != "" {
		c.add("s.key = ?", f.Key)
	}
	if f.ParentID != "" {
		c.add("s.parent_id = ?", f.ParentID)
	}
	if f.Kind != "" {
		c.add("s.kind = ?", f.Kind)
	}
	if !f.UpdatedBefore.IsZero() {
		c.add("s.updated_at < ?", ms(f.UpdatedBefore))
	}
	if f.Before != nil {
		c.add("(s.updated_at, s.id) < (?, ?)", ms(f.Before.UpdatedAt), f.Before.ID)
	}
	q := "WHERE " + c.String() + " ORDER BY s.updated_at DESC, s.id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return s.querySessions(ctx, s.pool, q, c.args...)
}

// Resolve implements loom.Store with the order of loom.ResolveWith.
func (s *Store) Resolve(ctx context.Context, ref string, scope loom.ResolveScope) (*loom.Session, error) {
	if strings.TrimSpace(ref) != "" && !storable(ref) {
		return nil, loom.NotFound(ref)
	}
	return loom.ResolveWith(ref, scope, func(by loom.Lookup, v string) ([]*loom.Session, error) {
		var c conds
		if scope.UserID != "" {
			c.add("s.user_id = ?", scope.UserID)
		}
		if scope.Deleted {
			c.add("s.deleted_at IS NOT NULL")
		} else {
			c.add("s.deleted_at IS NULL")
		}
		switch by {
		case loom.ByID:
			c.add("s.id = ?", v)
		case loom.ByPrefix:
			// Ids are lowercase hex and dashes and compare bytewise, so
			// the range [prefix, prefix+"~") holds exactly the ids that
			// start with it.
			c.add("s.id >= ? AND s.id < ?", v, v+"~")
		case loom.ByKey:
			c.add("s.key = ?", v)
		case loom.ByTitle:
			c.add("lower(s.title) = lower(?)", v)
		}
		return s.querySessions(ctx, s.pool, "WHERE "+c.String()+" ORDER BY s.updated_at DESC, s.id DESC LIMIT 20", c.args...)
	})
}

// UpdateSession implements loom.Store.
func (s *Store) UpdateSession(ctx context.Context, id string, u loom.SessionUpdate) (*loom.Session, error) {
	var out *loom.Session
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		cur, err := s.sessionTx(ctx, tx, id, "FOR UPDATE OF s")
		if err != nil {
			return err
		}
		var sets []string
		var args []any
		set := func(col string, v any) {
			args = append(args, v)
			sets = append(sets, fmt.Sprintf("%s = $%d", col, len(args)))
		}
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
			set("updated_at", ms(s.Now()))
			args = append(args, cur.ID)
			q := fmt.Sprintf(`UPDATE sessions SET %s WHERE id = $%d`, strings.Join(sets, ", "), len(args))
			if _, err := tx.Exec(ctx, q, args...); err != nil {
				if isUnique(err) {
					return loom.Errorf(loom.ECONFLICT, "another session already has that key in that project")
				}
				return fmt.Errorf("update session %s: %w", id, err)
			}
		}
		out, err = s.sessionTx(ctx, tx, cur.ID, "")
		return err
	})
	return out, err
}
