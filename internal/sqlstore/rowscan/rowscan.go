// Package rowscan reads loom's rows the same way for both engines. The
// engines select the same columns in the same order (the column lists
// here), and values whose types differ between them go through
// database/sql's Scanner interface, which both drivers call: SQLite hands
// over times as RFC 3339 text and JSON as text, PostgreSQL times as time
// values and JSON as bytes.
package rowscan

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
)

// Scanner is a row: *sql.Row, *sql.Rows and pgx.Row all are.
type Scanner interface {
	Scan(dest ...any) error
}

// Rows are the rows of a query: *sql.Rows and pgx.Rows both are.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// Result is rows that the reader closes: pgx.Rows is, and *sql.Rows is
// through an engine's Querier.
type Result interface {
	Rows
	Close()
}

// Querier runs a query: an engine's connection, pool or transaction, as
// the engine adapts it.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (Result, error)
}

// All runs q on db and reads every row with scan.
func All[T any](ctx context.Context, db Querier, scan func(Scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return Collect(rows, scan)
}

// Collect reads every row with scan; the caller closes rows.
func Collect[T any](rows Rows, scan func(Scanner) (T, error)) ([]T, error) {
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// String reads a row of one text column.
func String(row Scanner) (string, error) {
	var s string
	err := row.Scan(&s)
	return s, err
}

// Time is a time column that may be NULL, stored as RFC 3339 text
// (SQLite) or as a timestamp (PostgreSQL). Times come back in UTC.
type Time struct {
	T     time.Time
	Valid bool
}

// Scan implements sql.Scanner.
func (t *Time) Scan(v any) error {
	*t = Time{}
	switch v := v.(type) {
	case nil:
		return nil
	case time.Time:
		t.T = v.UTC()
	case string:
		t.T = parseTime(v)
	case []byte:
		t.T = parseTime(string(v))
	default:
		return fmt.Errorf("time column holds %T", v)
	}
	t.Valid = true
	return nil
}

// parseTime reads a stored time; text that is not one (written by hand)
// reads as the zero time rather than making the row unreadable.
func parseTime(s string) time.Time {
	p, _ := loom.ParseTime(s)
	return p.UTC()
}

// Ptr is the time, nil for NULL.
func (t Time) Ptr() *time.Time {
	if !t.Valid {
		return nil
	}
	v := t.T
	return &v
}

// Bytes is a text or JSON column that may be NULL, as bytes.
type Bytes struct {
	B     []byte
	Valid bool
}

// Scan implements sql.Scanner. It copies what it is given: drivers may
// reuse their buffers.
func (b *Bytes) Scan(v any) error {
	*b = Bytes{}
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		b.B = []byte(v)
	case []byte:
		b.B = append([]byte(nil), v...)
	default:
		return fmt.Errorf("text column holds %T", v)
	}
	b.Valid = true
	return nil
}

// SessionColumns are the columns Session reads: a session s and its lock
// row l (NULL when there is none), from SessionFrom.
const SessionColumns = `s.id, s.user_id, s.key, s.surface, s.title, s.description, s.kind,
	s.parent_id, s.fork_turn, s.project_id, s.project_name, s.project_root, s.cwd,
	s.model, s.provider, s.profile, s.message_count, s.turn_count, s.summary_seq,
	s.last_prompt, s.input_tokens, s.output_tokens, s.reasoning_tokens,
	s.cache_read_tokens, s.cache_write_tokens, s.cache_write_1h_tokens, s.cost_usd, s.api_calls,
	s.compactions, s.created_at, s.updated_at, s.deleted_at, s.archived_at,
	s.git_branch, s.source_tool, s.source_version, s.source_path, s.team, s.member,
	l.owner, l.pid, l.host, l.since, l.expires_at`

// SessionFrom joins a session with its lock row.
const SessionFrom = ` FROM sessions s LEFT JOIN locks l ON l.session_id = s.id `

// sessionRow is what Session scans a row into, allocated at once (see
// messageRow); the session returned keeps it, some 200 bytes more.
type sessionRow struct {
	x                         loom.Session
	src                       loom.Source
	key, parent, owner, host  sql.NullString
	pid                       sql.NullInt64
	created, updated, deleted Time
	archived                  Time
	since, expires            Time
}

// Session reads a row of SessionColumns. The lock row goes into the
// session's Lock when live says it still binds: a dead holder's lock
// counts as none.
func Session(row Scanner, live func(*loom.Lock) bool) (*loom.Session, error) {
	r := &sessionRow{}
	x, src := &r.x, &r.src
	u := &x.Usage
	err := row.Scan(&x.ID, &x.UserID, &r.key, &x.Surface, &x.Title, &x.Description, &x.Kind,
		&r.parent, &x.ForkTurn, &x.Project.ID, &x.Project.Name, &x.Project.Root, &x.Cwd,
		&x.Model, &x.Provider, &x.Profile, &x.MessageCount, &x.TurnCount, &x.SummarySeq,
		&x.LastPrompt, &u.InputTokens, &u.OutputTokens, &u.ReasoningTokens,
		&u.CacheReadTokens, &u.CacheWriteTokens, &u.CacheWrite1hTokens, &u.CostUSD, &u.APICalls,
		&u.Compactions, &r.created, &r.updated, &r.deleted, &r.archived,
		&x.GitBranch, &src.Tool, &src.Version, &src.Path, &x.Team, &x.Member,
		&r.owner, &r.pid, &r.host, &r.since, &r.expires)
	if err != nil {
		return nil, err
	}
	x.Key, x.ParentID = r.key.String, r.parent.String
	x.CreatedAt, x.UpdatedAt, x.DeletedAt, x.ArchivedAt = r.created.T, r.updated.T, r.deleted.Ptr(), r.archived.Ptr()
	if src.Tool != "" {
		x.Source = src
	}
	if r.owner.Valid {
		l := &loom.Lock{Owner: r.owner.String, PID: int(r.pid.Int64), Host: r.host.String, Since: r.since.T, Expires: r.expires.T}
		if live(l) {
			x.Lock = l
		}
	}
	return x, nil
}

// SummaryColumns are the columns Summary reads, of a session s.
const SummaryColumns = `s.id, s.key, s.title, s.surface, s.kind, s.parent_id, s.fork_turn,
	s.project_id, s.project_name, s.project_root, s.message_count, s.last_prompt,
	s.created_at, s.updated_at, s.deleted_at, s.archived_at, s.git_branch, s.description,
	s.team, s.member`

// summaryRow is what Summary scans a row into, allocated at once (see
// messageRow).
type summaryRow struct {
	x                         loom.SessionSummary
	key, parent               sql.NullString
	created, updated, deleted Time
	archived                  Time
}

// Summary reads a row of SummaryColumns.
func Summary(row Scanner) (*loom.SessionSummary, error) {
	r := &summaryRow{}
	x := &r.x
	err := row.Scan(&x.ID, &r.key, &x.Title, &x.Surface, &x.Kind, &r.parent, &x.ForkTurn,
		&x.Project.ID, &x.Project.Name, &x.Project.Root, &x.MessageCount, &x.LastPrompt,
		&r.created, &r.updated, &r.deleted, &r.archived, &x.GitBranch, &x.Description,
		&x.Team, &x.Member)
	if err != nil {
		return nil, err
	}
	x.Key, x.ParentID = r.key.String, r.parent.String
	x.CreatedAt, x.UpdatedAt, x.DeletedAt, x.ArchivedAt = r.created.T, r.updated.T, r.deleted.Ptr(), r.archived.Ptr()
	return x, nil
}

// Summaries runs a query that selects SummaryColumns and reads its
// summaries.
func Summaries(ctx context.Context, db Querier, query string, args ...any) ([]*loom.SessionSummary, error) {
	out, err := All(ctx, db, Summary, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// Sessions runs a query that selects SessionColumns and reads its
// sessions (see Session).
func Sessions(ctx context.Context, db Querier, live func(*loom.Lock) bool, query string, args ...any) ([]*loom.Session, error) {
	out, err := All(ctx, db, func(row Scanner) (*loom.Session, error) { return Session(row, live) }, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// LockColumns are the columns Lock reads from locks.
const LockColumns = `owner, pid, host, since, expires_at`

// Lock reads a row of LockColumns.
func Lock(row Scanner) (*loom.Lock, error) {
	var l loom.Lock
	var since, expires Time
	if err := row.Scan(&l.Owner, &l.PID, &l.Host, &since, &expires); err != nil {
		return nil, err
	}
	l.Since, l.Expires = since.T, expires.T
	return &l, nil
}

// MessageColumns are the columns Message reads: a message m and its body
// b.
const MessageColumns = `m.session_id, m.seq, m.id, m.role, m.turn, b.parts, m.model, m.provider,
	m.input_tokens, m.output_tokens, m.reasoning_tokens, m.cache_read_tokens,
	m.cache_write_tokens, m.cache_write_1h_tokens, m.cost_usd, m.api_calls, m.compactions, m.error,
	m.created_at, m.completed_at`

// SpanMessageColumns are MessageColumns of a message m read through the
// spans sp of a session (see span.Span): its session is the one that
// reads it, which need not be the one it is stored under. Engines read
// messages only this way.
var SpanMessageColumns = "sp.session_id" + strings.TrimPrefix(MessageColumns, "m.session_id")

// messageRow is what Message scans a row into, allocated at once: each
// value handed to Scan escapes, and as separate variables each would be
// an allocation of its own.
type messageRow struct {
	m                  loom.Message
	parts              View
	errText            Bytes
	created, completed Time
}

// Message reads a row of MessageColumns.
func Message(row Scanner) (*loom.Message, error) { return MessageIn(row, "", false) }

// Salvaged is Message for a read under loom.MessageQuery.Salvage.
func Salvaged(row Scanner) (*loom.Message, error) { return MessageIn(row, "", true) }

// OwnMessageColumns are MessageColumns without the first, the session,
// for a query that reads one session's messages (see
// PackedMessageColumns).
var OwnMessageColumns = strings.TrimPrefix(MessageColumns, "m.session_id, ")

// MessageIn reads a row of MessageColumns, or of OwnMessageColumns
// as a message of session when session is not empty; with salvage, parts
// that do not decode are read as loom.DamagedParts.
func MessageIn(row Scanner, session string, salvage bool) (*loom.Message, error) {
	r := &messageRow{}
	m := &r.m
	u := &m.Usage
	dest := []any{&m.SessionID, &m.Seq, &m.ID, &m.Role, &m.Turn, &r.parts, &m.Model, &m.Provider,
		&u.InputTokens, &u.OutputTokens, &u.ReasoningTokens, &u.CacheReadTokens,
		&u.CacheWriteTokens, &u.CacheWrite1hTokens, &u.CostUSD, &u.APICalls, &u.Compactions, &r.errText,
		&r.created, &r.completed}
	if session != "" {
		m.SessionID, dest = session, dest[1:]
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	var err error
	if m.Parts, err = sqlstore.DecodeParts(r.parts.B); err != nil {
		if !salvage {
			return nil, fmt.Errorf("message %d of %s: %w", m.Seq, m.SessionID, err)
		}
		m.Parts = loom.DamagedParts(err)
	}
	r.parts = View{}
	m.Error = sqlstore.DecodeError(r.errText.B, r.errText.Valid)
	m.CreatedAt, m.CompletedAt = r.created.T, r.completed.Ptr()
	return m, nil
}

// View is a text or JSON column read only until the next row: it keeps
// the bytes it is given without copying them, which a driver may reuse
// for the next row, and views a string as its bytes, which must not be
// written to.
type View struct{ B []byte }

// Scan implements sql.Scanner.
func (t *View) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		t.B = nil
	case string:
		t.B = unsafe.Slice(unsafe.StringData(v), len(v))
	case []byte:
		t.B = v
	default:
		return fmt.Errorf("text column holds %T", v)
	}
	return nil
}

// TokenColumns are the columns Token reads from tokens.
//
// A token's scope is in token_scopes, which holds only the tokens that
// are not full.
const TokenColumns = `id, user_id, name, created_at, last_used_at, revoked_at, expires_at, coalesce((SELECT scope FROM token_scopes WHERE token_id = tokens.id), 'full')`

// Token reads a row of TokenColumns.
func Token(row Scanner) (*loom.Token, error) {
	var t loom.Token
	var created, used, revoked, expires Time
	if err := row.Scan(&t.ID, &t.UserID, &t.Name, &created, &used, &revoked, &expires, &t.Scope); err != nil {
		return nil, err
	}
	t.CreatedAt, t.LastUsedAt, t.RevokedAt, t.ExpiresAt = created.T, used.Ptr(), revoked.Ptr(), expires.Ptr()
	return &t, nil
}

// ShareColumns are the columns Share reads, the ciphertext's size (0
// once it is deleted) last.
const ShareColumns = `id, user_id, created_at, expires_at, revoked_at, coalesce(length(blob), 0)`

// Share reads a row of ShareColumns.
func Share(row Scanner) (*loom.Share, error) {
	var s loom.Share
	var created, expires, revoked Time
	if err := row.Scan(&s.ID, &s.UserID, &created, &expires, &revoked, &s.Size); err != nil {
		return nil, err
	}
	s.CreatedAt, s.ExpiresAt, s.RevokedAt = created.T, expires.T, revoked.Ptr()
	return &s, nil
}

// UsageRow returns how a usage query's rows are read for group: key,
// name, sessions, messages, then the Usage fields in their order.
func UsageRow(group string) func(Scanner) (loom.UsageRow, error) {
	return func(row Scanner) (loom.UsageRow, error) {
		r := loom.UsageRow{Group: group}
		u := &r.Usage
		err := row.Scan(&r.Key, &r.Name, &r.Sessions, &r.Messages, &u.InputTokens, &u.OutputTokens,
			&u.ReasoningTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &u.CacheWrite1hTokens, &u.CostUSD, &u.APICalls, &u.Compactions)
		return r, err
	}
}

// UsageSlice reads a row of query.UsageSlices: the hour ("2006-01-02T15",
// UTC) and quarter of the slice, its first and last message's times,
// surface, project id and name, provider, model, whether it is long
// context, its message count, the Usage fields in their order, then its
// session (” when the sessions are summed).
func UsageSlice(row Scanner) (loom.UsageSlice, error) {
	var r loom.UsageSlice
	var hour string
	var quarter int
	var first, last Time
	u := &r.Usage
	if err := row.Scan(&hour, &quarter, &first, &last, &r.Surface, &r.ProjectID, &r.ProjectName, &r.Provider, &r.Model,
		&r.LongContext, &r.Messages, &u.InputTokens, &u.OutputTokens, &u.ReasoningTokens, &u.CacheReadTokens,
		&u.CacheWriteTokens, &u.CacheWrite1hTokens, &u.CostUSD, &u.APICalls, &u.Compactions, &r.SessionID); err != nil {
		return r, err
	}
	h, err := time.Parse("2006-01-02T15", hour)
	if err != nil {
		return r, fmt.Errorf("usage slice hour %q: %w", hour, err)
	}
	r.Start = h.Add(time.Duration(quarter) * loom.UsageSliceMinutes * time.Minute)
	r.First, r.Last = first.T, last.T
	return r, nil
}

// ImportedFileColumns are the columns ImportedFile reads from import_files.
const ImportedFileColumns = `user_id, path, tool, bundle, size, mtime_ns, source_id, session_id, imported_at`

// ImportedFile reads a row of ImportedFileColumns.
func ImportedFile(row Scanner) (loom.ImportedFile, error) {
	var f loom.ImportedFile
	var mtime int64
	var at Time
	if err := row.Scan(&f.UserID, &f.Path, &f.Tool, &f.Bundle, &f.Size, &mtime, &f.SourceID, &f.SessionID, &at); err != nil {
		return f, err
	}
	f.ModTime, f.ImportedAt = time.Unix(0, mtime).UTC(), at.T
	return f, nil
}

// OriginalFileColumns are the columns OriginalFile reads: o is a kept
// file's last chunk in originals, and the count and stored bytes are of
// all of its chunks.
const OriginalFileColumns = `o.user_id, o.path, o.tool, o.bundle, o.session_id, o.off + o.size, o.tail, o.mtime_ns,
	(SELECT COUNT(*) FROM originals c WHERE c.user_id = o.user_id AND c.path = o.path),
	(SELECT COALESCE(SUM(LENGTH(c.data)), 0) FROM originals c WHERE c.user_id = o.user_id AND c.path = o.path)`

// OriginalFile reads a row of OriginalFileColumns.
func OriginalFile(row Scanner) (loom.OriginalFile, error) {
	var f loom.OriginalFile
	var mtime, chunks int64
	if err := row.Scan(&f.UserID, &f.Path, &f.Tool, &f.Bundle, &f.SessionID, &f.Size, &f.Tail, &mtime, &chunks, &f.Stored); err != nil {
		return f, err
	}
	f.Chunks, f.ModTime = int(chunks), time.Unix(0, mtime).UTC()
	return f, nil
}

// Usage reads a row of query.UsageTotals: usage summed over rows.
func Usage(row Scanner) (loom.Usage, error) {
	var u loom.Usage
	err := row.Scan(usageFields(&u)...)
	return u, err
}

// usageFields are where a row's usage columns go, in the order of
// loom.Usage's fields (query.UsageTotals' order).
func usageFields(u *loom.Usage) []any {
	return []any{&u.InputTokens, &u.OutputTokens, &u.ReasoningTokens, &u.CacheReadTokens,
		&u.CacheWriteTokens, &u.CacheWrite1hTokens, &u.CostUSD, &u.APICalls, &u.Compactions}
}

// OwnUsageColumns are the columns OwnUsage reads from messages: a
// message's id and its usage.
const OwnUsageColumns = `id, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
	cache_write_tokens, cache_write_1h_tokens, cost_usd, api_calls, compactions`

// OwnUsage reads a row of OwnUsageColumns, of message seq of session id
// in the session's own rows: the message's id and its usage. No row
// (noRows, the driver's error for it) is ENOTFOUND.
func OwnUsage(row Scanner, noRows error, id string, seq int64) (string, loom.Usage, error) {
	var u loom.Usage
	var mid string
	err := row.Scan(append([]any{&mid}, usageFields(&u)...)...)
	if errors.Is(err, noRows) {
		return "", u, loom.Errorf(loom.ENOTFOUND, "session %s stores no message %d of its own", id, seq)
	}
	if err != nil {
		return "", u, fmt.Errorf("read usage of message %d: %w", seq, err)
	}
	return mid, u, nil
}

// PathEdit reads a row of one column, an edit's path (EditQuery.PathsOnly).
func PathEdit(row Scanner) (loom.FileEdit, error) {
	var e loom.FileEdit
	err := row.Scan(&e.Path)
	return e, err
}

// BareEditColumns are the columns BareEdit reads from edits e.
const BareEditColumns = `e.tool, e.op, e.path, e.from_path, e.lines`

// BareEdit reads a row of BareEditColumns: an edit without its message.
func BareEdit(row Scanner) (loom.FileEdit, error) {
	var e loom.FileEdit
	var lines []byte
	err := row.Scan(&e.Tool, &e.Op, &e.Path, &e.From, &lines)
	e.Lines = sqlstore.UnpackLines(lines)
	return e, err
}

// RecordedRootColumns are the columns RecordedRoot reads from sessions
// grouped by project_root and project_id.
const RecordedRootColumns = `project_root, project_id, max(project_name), count(*)`

// RecordedRoot reads a row of RecordedRootColumns.
func RecordedRoot(row Scanner) (loom.RecordedRoot, error) {
	var r loom.RecordedRoot
	err := row.Scan(&r.Root, &r.ProjectID, &r.ProjectName, &r.Sessions)
	return r, err
}

// ActivitySlice reads a row of query.ActivityPrompts: the hour, the
// quarter, the session and the count.
func ActivitySlice(row Scanner) (loom.ActivitySlice, error) {
	var r loom.ActivitySlice
	var hour string
	var quarter int
	if err := row.Scan(&hour, &quarter, &r.SessionID, &r.Count); err != nil {
		return r, err
	}
	h, err := time.Parse("2006-01-02T15", hour)
	if err != nil {
		return r, fmt.Errorf("activity hour %q: %w", hour, err)
	}
	r.Start = h.Add(time.Duration(quarter) * loom.UsageSliceMinutes * time.Minute)
	return r, nil
}

// ToolCount reads a row of query.ActivityTools: the tool's name, its
// calls and its errors. A part without a name counts under "".
func ToolCount(row Scanner) (loom.ToolCount, error) {
	var r loom.ToolCount
	var name *string
	if err := row.Scan(&name, &r.Calls, &r.Errors); err != nil {
		return r, err
	}
	if name != nil {
		r.Name = *name
	}
	return r, nil
}

// SessionActivity reads a row of query.ActivitySessions.
func SessionActivity(row Scanner) (loom.SessionActivity, error) {
	var r loom.SessionActivity
	var first, last Time
	if err := row.Scan(&r.SessionID, &r.Messages, &r.Prompts, &first, &last); err != nil {
		return r, err
	}
	r.FirstPrompt, r.LastReply = first.T, last.T
	return r, nil
}
