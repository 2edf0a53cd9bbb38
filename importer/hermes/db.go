package hermes

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

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
		"reasoning_tokens", "api_call_count", "estimated_cost_usd", "actual_cost_usd", "model_config"}
	messageColumns = []string{"id", "role", "content", "tool_call_id", "tool_calls", "timestamp", "reasoning",
		"reasoning_content", "_compressed_summary", "active", "compacted", "display_identity", "tool_name"}
)

// delegateTool is the tool by which a Hermes session runs a sub-agent
// (tools/delegate_tool.py): each child session it starts is a session
// of its own, whose parent_session_id names the session that called it.
const delegateTool = "delegate_task"

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
	all, err := sessionRows(ctx, db, have, path, res)
	if err != nil {
		return nil, fail(err)
	}
	byID := map[string]sessionRow{}
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
		r.lineage(byID)
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
	linkDelegates(res.Sessions)
	readTranscripts(ctx, b.Files[1:], inDB, res)
	return res, nil
}

// sessionRow is a row of the sessions table: the session, its totals,
// why it ended, its source and the markers of its lineage.
type sessionRow struct {
	s      *importer.Session
	usage  loom.Usage
	end    string
	source string
	marks  markers
}

// sessionRows reads the sessions table, oldest first.
func sessionRows(ctx context.Context, db *sql.DB, have map[string]bool, path string, res *importer.Result) ([]sessionRow, error) {
	rows, err := db.QueryContext(ctx, "SELECT "+importer.SQLiteSelect(have, sessionColumns)+" FROM sessions ORDER BY started_at, id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var all []sessionRow
	str, num := importer.SQLiteString, importer.SQLiteFloat
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, len(sessionColumns))
		if err != nil {
			return nil, err
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
		all = append(all, sessionRow{s, u, str(v[6]), str(v[1]), markersOf(str(v[18]))})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return all, nil
}

// lineage is what a child is, as Hermes's own lineage rules
// (hermes_state_common.py) tell: a /branch child (its model_config's
// _branched_from names the parent) is a fork; a reset child
// (_reset_from) a conversation of its own; a delegated run
// (_delegate_from, or source "tool") a sub-agent; a child of a session
// ended by compression that is none of those continues the
// conversation, starting with the summary: a fork of the parent from
// which it goes on. Any other child (a database of before the markers)
// was run by its parent. A parent the database does not hold is none.
func (r sessionRow) lineage(byID map[string]sessionRow) {
	p, ok := byID[r.s.ParentSourceID]
	if !ok || p.s.SourceID == r.s.SourceID {
		r.s.ParentSourceID = ""
		return
	}
	pid := p.s.SourceID
	switch {
	case r.marks.Reset == pid:
		r.s.ParentSourceID = ""
	case r.marks.Branched == pid:
		r.s.Kind = loom.KindFork
	case r.marks.Delegate == pid || r.source == "tool" || r.source == "subagent":
		r.s.Kind = loom.KindSubagent
	case p.end == "compression":
		r.s.Kind = loom.KindFork
	default:
		r.s.Kind = loom.KindSubagent
	}
}

// readTranscripts reads the transcripts Hermes wrote when the database
// refused a write, those of files whose session the database does not
// hold (inDB), into res.
func readTranscripts(ctx context.Context, files []string, inDB map[string]bool, res *importer.Result) {
	for _, f := range files {
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
	var all [][]any
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, len(messageColumns))
		if err != nil {
			return err
		}
		all = append(all, v)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	t := &importer.Transcript{Res: res}
	str, num := importer.SQLiteString, importer.SQLiteFloat
	for _, v := range shown(all) {
		mid := strconv.FormatInt(int64(num(v[0])), 10)
		at := importer.UnixTime(num(v[5]))
		l := importer.ChatLine{Role: str(v[1]), ToolCallID: str(v[3]), Reasoning: str(v[7]), Thinking: str(v[6])}
		if c := str(v[2]); c != "" {
			l.Content, _ = json.Marshal(c)
		}
		if calls := str(v[4]); calls != "" && json.Unmarshal([]byte(calls), &l.ToolCalls) != nil {
			res.Problemf(s.Path, 0, "session "+s.SourceID+", message "+mid+": tool calls that are not a list of calls")
		} else if !utf8.ValidString(calls) {
			res.Problemf(s.Path, 0, "session "+s.SourceID+", message "+mid+": tool calls: "+importer.NotUTF8)
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
	s.Messages = t.Msgs
	return nil
}

// shown is what Hermes shows of a session's rows (all, read in order):
// an in-place compaction archives the rows it summarised (active 0,
// compacted 1) and writes the tail it keeps again as new active rows,
// the same messages at the same times, which Hermes shows once by
// their display_identity (a hash of role, content, time, tool call and
// tool name; the fields themselves where an older database has not
// computed it yet). An archived row an active row repeats is left out:
// the active one stands in its place.
func shown(all [][]any) [][]any {
	key := func(v []any) string {
		str := importer.SQLiteString
		if id := str(v[11]); id != "" {
			return "d\x00" + id
		}
		return strings.Join([]string{"f", str(v[1]), str(v[2]), str(v[5]), str(v[3]), str(v[4]), str(v[12])}, "\x00")
	}
	active := func(v []any) bool { return v[9] == nil || importer.SQLiteFloat(v[9]) != 0 }
	live := map[string]int{}
	for _, v := range all {
		if active(v) {
			live[key(v)]++
		}
	}
	out := make([][]any, 0, len(all))
	for _, v := range all {
		if !active(v) && live[key(v)] > 0 {
			continue
		}
		out = append(out, v)
	}
	return out
}

// markers are the lineage markers Hermes writes in a child session's
// model_config: the parent it was branched, reset or delegated from.
type markers struct {
	Branched string `json:"_branched_from"`
	Delegate string `json:"_delegate_from"`
	Reset    string `json:"_reset_from"`
}

// markersOf reads the markers of a model_config; none when it is not a
// JSON object.
func markersOf(config string) markers {
	var m markers
	if json.Unmarshal([]byte(config), &m) != nil {
		return markers{}
	}
	return m
}

// linkDelegates gives each delegate_task call of sessions an agent part
// for each sub-agent session it ran. Hermes records no call id on the
// child: a sub-agent belongs to the last delegate_task call its parent
// made before the sub-agent started (one call may run several, a batch
// of tasks).
func linkDelegates(sessions []*importer.Session) {
	type call struct {
		m    *loom.Message
		part loom.Part
		subs int
	}
	calls := map[string][]*call{}
	for _, s := range sessions {
		for _, m := range s.Messages {
			for _, p := range m.Parts {
				if p.Type == loom.PartTool && p.Name == delegateTool {
					calls[s.SourceID] = append(calls[s.SourceID], &call{m: m, part: p})
				}
			}
		}
	}
	for _, s := range sessions {
		if s.Kind != loom.KindSubagent || len(calls[s.ParentSourceID]) == 0 {
			continue
		}
		var c *call
		for _, k := range calls[s.ParentSourceID] {
			if !k.m.CreatedAt.After(s.CreatedAt) {
				c = k
			}
		}
		if c == nil {
			continue
		}
		if c.subs++; c.subs == 1 {
			importer.AddAgentPart(c.m, c.part, s.SourceID)
			continue
		}
		c.m.Parts = append(c.m.Parts, loom.Part{ID: c.part.ID + "/agent/" + strconv.Itoa(c.subs), Type: loom.PartAgent,
			Name: c.part.Name, SessionID: s.SourceID})
	}
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
