package crush

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// maxParts bounds one message's parts column: a larger one is a
// problem, not read.
const maxParts = 64 << 20

// sessionColumns are the sessions table's columns the reader uses, in
// the order it scans them; one an older schema lacks reads as NULL
// (summary_message_id came with Crush's second migration).
var sessionColumns = []string{
	"id", "parent_session_id", "title", "prompt_tokens", "completion_tokens", "cost",
	"created_at", "updated_at", "summary_message_id",
}

// messageColumns are the messages table's, parts apart (provider and
// is_summary_message came with later migrations).
var messageColumns = []string{
	"id", "role", "model", "provider", "created_at", "updated_at", "finished_at", "is_summary_message",
}

type dbSession struct {
	*importer.Session
	parent  string
	summary string
	usage   loom.Usage
}

type dbReader struct {
	db   *sql.DB
	path string
	res  *importer.Result
	// dataDir is the name of a project's data directory, where the
	// database is kept.
	dataDir string
}

func (r *dbReader) fail(err error) error { return importer.SQLiteError(Tool, r.path, err) }

// readDB reads every session of Crush's database, parents before the
// sub-agents they ran.
func readDB(ctx context.Context, path string, wal bool, dataDir string) (*importer.Result, error) {
	db, err := importer.OpenSQLiteTables(ctx, Tool, "Crush", path, wal, "sessions", "messages")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r := &dbReader{db: db, path: path, res: &importer.Result{}, dataDir: dataDir}
	sessions, err := r.sessions(ctx)
	if err != nil {
		return nil, err
	}
	mcols, err := importer.SQLiteColumns(ctx, db, "messages")
	if err != nil {
		return nil, r.fail(err)
	}
	byID := map[string]*dbSession{}
	for _, s := range sessions {
		byID[s.SourceID] = s
	}
	// Crush adds a sub-agent's cost to its parent's: the parent keeps
	// its own.
	for _, s := range sessions {
		if p := byID[s.parent]; p != nil {
			p.usage.CostUSD = max(p.usage.CostUSD-s.usage.CostUSD, 0)
		}
	}
	conv := map[string]*converter{}
	for _, s := range sessions {
		c, err := r.messages(ctx, mcols, s)
		if err != nil {
			return nil, err
		}
		conv[s.SourceID] = c
	}
	// Link each sub-agent to its parent's call, then keep the sessions
	// that hold messages, parents first.
	var mains, subs []*importer.Session
	for _, s := range sessions {
		switch {
		case len(s.Messages) == 0:
			r.res.Skip("empty-session")
		case s.parent == "" || byID[s.parent] == nil:
			if s.parent != "" {
				r.res.Skip("orphan-sub-agent")
				continue
			}
			mains = append(mains, s.Session)
		default:
			s.Kind, s.ParentSourceID = loom.KindSubagent, s.parent
			if _, call, ok := agentSession(s.SourceID); ok {
				conv[s.parent].linkAgent(call, s.SourceID)
			}
			subs = append(subs, s.Session)
		}
	}
	r.res.Sessions = append(mains, subs...)
	return r.res, nil
}

func (r *dbReader) sessions(ctx context.Context) ([]*dbSession, error) {
	have, err := importer.SQLiteColumns(ctx, r.db, "sessions")
	if err != nil {
		return nil, r.fail(err)
	}
	if !have["id"] {
		return nil, errors.New("crush: " + r.path + ": sessions table has no id column")
	}
	order := importer.SQLiteOrder(have, "created_at", "rowid")
	rows, err := r.db.QueryContext(ctx, "SELECT "+importer.SQLiteSelect(have, sessionColumns)+" FROM sessions ORDER BY "+order)
	if err != nil {
		return nil, r.fail(err)
	}
	defer rows.Close()
	var out []*dbSession
	cwd := projectOf(r.path, r.dataDir)
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, len(sessionColumns))
		if err != nil {
			return nil, r.fail(err)
		}
		str := importer.SQLiteString
		s := &dbSession{
			Session: &importer.Session{
				SourceID:  str(v[0]),
				Kind:      loom.KindMain,
				Title:     strings.TrimSpace(str(v[2])),
				Cwd:       cwd,
				Path:      r.path,
				CreatedAt: unixTime(importer.SQLiteFloat(v[6])),
				UpdatedAt: unixTime(importer.SQLiteFloat(v[7])),
			},
			parent:  str(v[1]),
			summary: str(v[8]),
			usage: loom.Usage{
				InputTokens:  count(v[3]),
				OutputTokens: count(v[4]),
				CostUSD:      max(importer.SQLiteFloat(v[5]), 0),
			},
		}
		switch {
		case s.SourceID == "" || strings.ContainsAny(s.SourceID, "\n\r"):
			r.res.Problemf(r.path, 0, "session without a usable id")
			continue
		case strings.HasPrefix(s.SourceID, "title-"):
			// Older versions asked for a session's title in a session
			// of its own.
			r.res.Skip("title-session")
			continue
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, r.fail(err)
	}
	return out, nil
}

// messages reads s's messages in the order Crush wrote them.
func (r *dbReader) messages(ctx context.Context, have map[string]bool, s *dbSession) (*converter, error) {
	order := importer.SQLiteOrder(have, "created_at", "rowid")
	rows, err := r.db.QueryContext(ctx, "SELECT "+importer.SQLiteSelect(have, messageColumns)+
		`, CASE WHEN octet_length(parts) > ? THEN NULL ELSE parts END, octet_length(parts)
		FROM messages WHERE session_id = ? ORDER BY `+order, maxParts, s.SourceID)
	if err != nil {
		return nil, r.fail(err)
	}
	defer rows.Close()
	c := newConverter(r.res, r.path)
	seen := map[string]bool{}
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, len(messageColumns)+2)
		if err != nil {
			return nil, r.fail(err)
		}
		str := importer.SQLiteString
		id := str(v[0])
		switch {
		case id == "" || strings.ContainsAny(id, "\n\r/"):
			r.res.Problemf(r.path, 0, "session "+s.SourceID+": message without a usable id")
			continue
		case seen[id]:
			r.res.Skip("duplicate-message")
			continue
		case importer.SQLiteFloat(v[len(v)-1]) > maxParts:
			r.res.Problemf(r.path, 0, "message "+id+": parts larger than "+strconv.Itoa(maxParts>>20)+" MiB")
			continue
		}
		seen[id] = true
		c.add(record{
			ID:       id,
			Role:     str(v[1]),
			Model:    str(v[2]),
			Provider: str(v[3]),
			Created:  unixTime(importer.SQLiteFloat(v[4])),
			Updated:  unixTime(importer.SQLiteFloat(v[5])),
			Finished: unixTime(importer.SQLiteFloat(v[6])),
			Summary:  importer.SQLiteFloat(v[7]) != 0 || (s.summary != "" && s.summary == id),
			Parts:    []byte(str(v[len(v)-2])),
		})
	}
	if err := rows.Err(); err != nil {
		return nil, r.fail(err)
	}
	s.Messages = c.finish(s.usage)
	if len(s.Messages) > 0 {
		if s.CreatedAt.IsZero() {
			s.CreatedAt = s.Messages[0].CreatedAt
		}
		if last := *s.Messages[len(s.Messages)-1].CompletedAt; last.After(s.UpdatedAt) {
			s.UpdatedAt = last
		}
	}
	return c, nil
}

// count reads a token count column.
func count(v any) int64 {
	n := int64(importer.SQLiteFloat(v))
	if n < 0 || n > 1e15 {
		return 0
	}
	return n
}

// unixTime is a Crush time: seconds since the epoch in its columns and
// parts (milliseconds are read too).
var unixTime = importer.UnixTime
