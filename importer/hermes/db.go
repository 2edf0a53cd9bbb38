package hermes

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// dbName is Hermes's database in its home directory, which its current
// source calls canonical: the sessions and their messages, with each
// session's totals.
const dbName = "state.db"

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// sessionColumns and messageColumns are the columns of Hermes's sessions
// and messages tables the reader uses, in the order it scans them; a
// column an older schema lacks is read as NULL.
var (
	sessionColumns = []string{"id", "source", "model", "parent_session_id", "started_at", "ended_at", "end_reason",
		"title", "cwd", "git_branch", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
		"reasoning_tokens", "api_call_count", "estimated_cost_usd", "actual_cost_usd"}
	messageColumns = []string{"id", "role", "content", "tool_call_id", "tool_calls", "timestamp", "reasoning",
		"reasoning_content", "_compressed_summary", "active", "compacted"}
)

// readDB reads every session of Hermes's database, then each transcript
// of the bundle whose session the database does not hold.
func readDB(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path, db, err := importer.OpenDBBundle(ctx, Tool, "Hermes", b, "sessions", "messages")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	fail := func(err error) error { return importer.SQLiteError(Tool, path, err) }
	have, err := importer.SQLiteColumns(ctx, db, "sessions")
	if err != nil {
		return nil, fail(err)
	}
	haveMsg, err := importer.SQLiteColumns(ctx, db, "messages")
	if err != nil {
		return nil, fail(err)
	}
	res := &importer.Result{}
	rows, err := db.QueryContext(ctx, "SELECT "+importer.SQLiteSelect(have, sessionColumns)+" FROM sessions ORDER BY started_at, id")
	if err != nil {
		return nil, fail(err)
	}
	type row struct {
		s      *importer.Session
		usage  loom.Usage
		end    string
		source string
	}
	var all []row
	str, num := importer.SQLiteString, importer.SQLiteFloat
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, len(sessionColumns))
		if err != nil {
			rows.Close()
			return nil, fail(err)
		}
		id := importer.LineID(str(v[0]))
		if id == "" {
			res.Skip("session-without-id")
			continue
		}
		s := &importer.Session{SourceID: id, Kind: loom.KindMain, Path: path, Model: strings.TrimSpace(str(v[2])),
			ParentSourceID: importer.LineID(str(v[3])), Title: importer.Clip(strings.TrimSpace(str(v[7])), 200),
			Cwd: str(v[8]), GitBranch: str(v[9]), CreatedAt: importer.UnixTime(num(v[4])), UpdatedAt: importer.UnixTime(num(v[5]))}
		u := loom.Usage{InputTokens: importer.Tokens(num(v[10])), OutputTokens: importer.Tokens(num(v[11])),
			CacheReadTokens: importer.Tokens(num(v[12])), CacheWriteTokens: importer.Tokens(num(v[13])),
			ReasoningTokens: importer.Tokens(num(v[14])), APICalls: importer.Tokens(num(v[15]))}
		if c := max(num(v[17]), num(v[16])); c > 0 && c < 1e9 {
			u.CostUSD = c
		}
		all = append(all, row{s, u, str(v[6]), str(v[1])})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fail(err)
	}
	byID := map[string]row{}
	for _, r := range all {
		byID[r.s.SourceID] = r
	}
	inDB := map[string]bool{}
	for _, r := range all {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		inDB[r.s.SourceID] = true
		if err := messages(ctx, db, haveMsg, r.s, res); err != nil {
			return nil, fail(err)
		}
		if len(r.s.Messages) == 0 {
			res.Skip("empty-session")
			continue
		}
		// A session that a compression of its parent started (after the
		// parent ended so) continues the conversation, and starts with
		// the summary; any other child (a delegated task, source "tool")
		// was run by its parent: a sub-agent.
		if p, ok := byID[r.s.ParentSourceID]; ok && p.s.SourceID != r.s.SourceID {
			continued := p.end == "compression" && r.source != "tool" && !r.s.CreatedAt.Before(p.s.UpdatedAt)
			if continued {
				r.s.ParentSourceID = ""
			} else {
				r.s.Kind = loom.KindSubagent
			}
		} else {
			r.s.ParentSourceID = ""
		}
		for i := len(r.s.Messages) - 1; i >= 0; i-- {
			if m := r.s.Messages[i]; m.Role == loom.RoleAssistant {
				m.Usage.Add(r.usage)
				break
			}
		}
		if r.s.CreatedAt.IsZero() {
			r.s.CreatedAt = r.s.Messages[0].CreatedAt
		}
		if r.s.UpdatedAt.IsZero() {
			r.s.UpdatedAt = r.s.Messages[len(r.s.Messages)-1].CreatedAt
		}
		res.Sessions = append(res.Sessions, r.s)
	}
	// The transcripts Hermes wrote when the database refused a write.
	for _, f := range b.Files[1:] {
		if !strings.HasSuffix(f, ".jsonl") || inDB[strings.TrimSuffix(filepath.Base(f), ".jsonl")] {
			continue
		}
		r, err := readFile(ctx, f)
		if err != nil {
			res.Problemf(f, 0, err.Error())
			continue
		}
		res.Sessions = append(res.Sessions, r.Sessions...)
		res.Problems = append(res.Problems, r.Problems...)
		for k, n := range r.Skipped {
			for range n {
				res.Skip(k)
			}
		}
	}
	return res, nil
}

// messages reads session s's messages in order: those Hermes still
// shows (active, or compacted away but kept); a message the compression
// made of what it summarised (_compressed_summary) is a summary.
func messages(ctx context.Context, db *sql.DB, have map[string]bool, s *importer.Session, res *importer.Result) error {
	where := ""
	if have["active"] && have["compacted"] {
		where = " AND (active = 1 OR compacted = 1)"
	}
	rows, err := db.QueryContext(ctx, "SELECT "+importer.SQLiteSelect(have, messageColumns)+" FROM messages WHERE session_id = ?"+where+" ORDER BY timestamp, id", s.SourceID)
	if err != nil {
		return err
	}
	defer rows.Close()
	t := &importer.Transcript{Res: res}
	str, num := importer.SQLiteString, importer.SQLiteFloat
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, len(messageColumns))
		if err != nil {
			return err
		}
		mid := strconv.FormatInt(int64(num(v[0])), 10)
		at := importer.UnixTime(num(v[5]))
		l := importer.ChatLine{Role: str(v[1]), ToolCallID: str(v[3]), Reasoning: str(v[7]), Thinking: str(v[6])}
		if c := str(v[2]); c != "" {
			l.Content, _ = json.Marshal(c)
		}
		if calls := str(v[4]); calls != "" && json.Unmarshal([]byte(calls), &l.ToolCalls) != nil {
			res.Problemf(s.Path, 0, "session "+s.SourceID+", message "+mid+": tool calls that are not a list of calls")
		}
		if num(v[8]) != 0 {
			t.Add(&loom.Message{ID: mid, Role: loom.RoleSummary, CreatedAt: at, Usage: loom.Usage{Compactions: 1},
				Parts: importer.TextParts(mid, loom.PartText, l.Content)})
			continue
		}
		if m := t.AddChat(mid, l, at, false); m != nil && m.Role == loom.RoleAssistant {
			m.Model = s.Model
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	s.Messages = t.Msgs
	return nil
}

// CountSessions counts the sessions of Hermes's database (the
// transcripts beside it are most often the same sessions); a transcript
// is one session.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	if filepath.Base(b.Name()) != dbName {
		return 1, nil
	}
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(*) FROM sessions", "sessions")
}
