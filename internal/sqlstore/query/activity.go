package query

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// Parts says how an engine reads the parts of bodies b one row each:
// From is joined after b, and Type, Name and Status are the SQL of a
// part's fields as text.
type Parts struct {
	From, Type, Name, Status string
}

// activityOf is the clause of the messages m of sessions s that f
// counts: the user's live sessions (archived ones too), one project's
// when it says so, written in its range, each stored message once (a
// fork's inherited history is counted in the session it was made in).
func activityOf(d Dialect, f loom.ActivityFilter) *Clause {
	c := New(d)
	c.Trash(false)
	c.Add("s.user_id = ?", f.UserID)
	if f.ProjectID != "" {
		c.Add("s.project_id = ?", f.ProjectID)
	}
	if !f.Since.IsZero() {
		c.Add("m.created_at >= ?", d.Time(f.Since))
	}
	if !f.Until.IsZero() {
		c.Add("m.created_at < ?", d.Time(f.Until))
	}
	c.Add(notInherited)
	return c
}

// ActivityPrompts returns the query of f's user messages per quarter
// hour and session: its rows are the hour (d.Hour), the quarter, the
// session and the count.
func ActivityPrompts(d Dialect, f loom.ActivityFilter) (string, []any) {
	c := activityOf(d, f)
	c.Add("m.role = ?", loom.RoleUser)
	return `SELECT ` + d.Hour + `, ` + d.Quarter + `, s.id, count(*)
	FROM session_messages m JOIN sessions s ON s.id = m.session_id WHERE ` + c.String() + `
	GROUP BY 1, 2, s.id ORDER BY 1, 2, s.id`, c.Args
}

// ActivitySessions returns the query of f's sessions: its rows are the
// session, its messages, its prompts, its first prompt's time and its
// last reply's (NULL when it has none).
func ActivitySessions(d Dialect, f loom.ActivityFilter) (string, []any) {
	c := activityOf(d, f)
	return `SELECT s.id, count(*), sum(CASE WHEN m.role = 'user' THEN 1 ELSE 0 END),
	min(CASE WHEN m.role = 'user' THEN m.created_at END), max(CASE WHEN m.role = 'assistant' THEN m.created_at END)
	FROM session_messages m JOIN sessions s ON s.id = m.session_id WHERE ` + c.String() + `
	GROUP BY s.id ORDER BY s.id`, c.Args
}

// ActivityTools returns the query of f's tool calls by tool: its rows
// are the tool's name, its calls and those that ended in an error,
// most called first.
func ActivityTools(d Dialect, p Parts, f loom.ActivityFilter) (string, []any) {
	c := activityOf(d, f)
	c.Add("m.role = ?", loom.RoleAssistant)
	c.Add(p.Type + " = 'tool'")
	return `SELECT ` + p.Name + `, count(*), sum(CASE WHEN ` + p.Status + ` = 'error' THEN 1 ELSE 0 END)
	FROM session_messages m JOIN sessions s ON s.id = m.session_id JOIN bodies b ON b.id = m.body_id ` + p.From + `
	WHERE ` + c.String() + `
	GROUP BY 1 ORDER BY 2 DESC, 1`, c.Args
}

// ReadActivity reads f's activity from db, both queries on it.
func ReadActivity(ctx context.Context, db rowscan.Querier, d Dialect, p Parts, f loom.ActivityFilter) (*loom.Activity, error) {
	if f.UserID == "" {
		return nil, loom.Errorf(loom.EINVALID, "activity: no user")
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return nil, loom.Errorf(loom.EINVALID, "activity: the range ends before it starts")
	}
	var a loom.Activity
	var err error
	q, args := ActivityPrompts(d, f)
	if a.Prompts, err = rowscan.All(ctx, db, rowscan.ActivitySlice, q, args...); err != nil {
		return nil, fmt.Errorf("activity: prompts: %w", err)
	}
	q, args = ActivitySessions(d, f)
	if a.Sessions, err = rowscan.All(ctx, db, rowscan.SessionActivity, q, args...); err != nil {
		return nil, fmt.Errorf("activity: sessions: %w", err)
	}
	q, args = ActivityTools(d, p, f)
	if a.Tools, err = rowscan.All(ctx, db, rowscan.ToolCount, q, args...); err != nil {
		return nil, fmt.Errorf("activity: tools: %w", err)
	}
	return &a, nil
}
