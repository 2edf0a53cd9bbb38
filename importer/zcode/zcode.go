// Package zcode reads the sessions of ZCode's CLI for loom's importer.
//
// ZCode keeps its sessions in a SQLite database, db.sqlite, in
// ~/.zcode/cli/db (agentsview looks in ~/.zcode/cli too): session (id,
// project and workspace, directory, title, times), message (each of a
// session, its data JSON: role and model), part (each of a message, its
// data JSON: a text, thinking or reasoning, a tool call as tool_use or,
// as opencode writes it, tool with its state's input and output or
// error, a tool_result) and model_usage (a turn's model call: model,
// status, tokens, start and end). Times are ISO text or numbers since
// the epoch (seconds, milliseconds, nanoseconds).
//
// What becomes what: each session a session, its messages in order
// (user, assistant, system) with their parts; a call completed by its
// result wherever that is; a user message that only carries results
// adds no message. A model call's tokens are the usage of the last reply
// made by its end (the last reply when none was).
//
// Learnt from agentsview's reader of it alone (kenn-io/agentsview at
// 538600744d1b87614d3746d36a0966c1f2ac1cad, internal/parser/zcode.go and
// the schema and rows its tests write in zcode_test.go, which try
// several names for each field; its registry's places in types.go): no
// public source or package of ZCode was found. The database in testdata
// is built to that schema (testdata/README.md).
package zcode

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads ZCode's database. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is ZCode's name in loom.
const Tool = "zcode"

const dbName = "db.sqlite"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is none: ZCode names each reply's model.
func (Format) Provider() string { return "" }

// Roots are $LOOM_ZCODE_DIR when set, else ~/.zcode/cli/db and
// ~/.zcode/cli.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.HomeDirs(env, home, "LOOM_ZCODE_DIR", []string{".zcode", "cli", "db"}, []string{".zcode", "cli"})
}

// Bundles is the database (with its write-ahead log).
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.DBBundles(Tool, root, dbName)
}

// CountSessions counts the sessions.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(*) FROM session", "session", "message")
}

// parseTime is a time ZCode wrote: ISO text, or a number since the
// epoch.
func parseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	if t := importer.ISOTime(s); !t.IsZero() {
		return t
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	if n >= 1e18 {
		return time.Unix(0, n).UTC()
	}
	return importer.UnixTime(float64(n))
}

type session struct {
	id, dir, title, created, updated string
}

type usage struct {
	model string
	end   time.Time
	u     loom.Usage
}

// Read reads every session of the database.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, db, err := importer.OpenDBBundle(ctx, Tool, "ZCode", b, "session", "message")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	sessions, err := readSessions(ctx, db)
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	hasParts, err := importer.SQLiteTables(ctx, db, "part")
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	hasUsage, err := importer.SQLiteTables(ctx, db, "model_usage")
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	res := &importer.Result{}
	for _, sn := range sessions {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := &importer.Transcript{Res: res}
		if err := readMessages(ctx, db, name, sn.id, hasParts > 0, t); err != nil {
			return nil, importer.SQLiteError(Tool, name, err)
		}
		if hasUsage > 0 {
			us, err := readUsage(ctx, db, sn.id)
			if err != nil {
				return nil, importer.SQLiteError(Tool, name, err)
			}
			giveUsage(t.Msgs, us)
		}
		s := t.Session(importer.LineID(sn.id), name)
		if s == nil {
			continue
		}
		s.Title, s.Cwd = importer.Clip(strings.TrimSpace(sn.title), 200), sn.dir
		s.CreatedAt, s.UpdatedAt = cmp.Or(parseTime(sn.created), s.CreatedAt), cmp.Or(parseTime(sn.updated), s.UpdatedAt)
		if m := importer.LastModelReply(s.Messages); m != nil {
			s.Model = m.Model
		}
		res.Keep(s, "session")
	}
	return res, nil
}

func readSessions(ctx context.Context, db *sql.DB) ([]session, error) {
	rows, err := db.QueryContext(ctx, `SELECT CAST(id AS TEXT), coalesce(directory, ''), coalesce(title, ''),
		coalesce(CAST(time_created AS TEXT), ''), coalesce(CAST(time_updated AS TEXT), '')
		FROM session ORDER BY coalesce(time_created, time_updated), id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []session
	for rows.Next() {
		var s session
		if err := rows.Scan(&s.id, &s.dir, &s.title, &s.created, &s.updated); err != nil {
			return nil, err
		}
		if s.id != "" {
			out = append(out, s)
		}
	}
	return out, rows.Err()
}

// message is a message row's data.
type message struct {
	Role    string          `json:"role"`
	ModelID string          `json:"modelID"`
	Model2  string          `json:"model_id"`
	Model   json.RawMessage `json:"model"`
}

func (m message) model() string {
	if s := cmp.Or(m.ModelID, m.Model2); s != "" {
		return s
	}
	var name string
	if json.Unmarshal(m.Model, &name) == nil {
		return name
	}
	var o struct {
		ModelID string `json:"modelID"`
		ID      string `json:"id"`
		Name    string `json:"name"`
	}
	_ = json.Unmarshal(m.Model, &o)
	return cmp.Or(o.ModelID, o.ID, o.Name)
}

// part is a part row's data, under each name ZCode is read to use.
type part struct {
	Type      string          `json:"type"`
	Text      json.RawMessage `json:"text"`
	Content   json.RawMessage `json:"content"`
	Value     json.RawMessage `json:"value"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolName  string          `json:"tool_name"`
	ToolName2 string          `json:"toolName"`
	Tool      string          `json:"tool"`
	Input     json.RawMessage `json:"input"`
	CallID    string          `json:"callID"`
	CallID2   string          `json:"callId"`
	UseID     string          `json:"tool_use_id"`
	UseID2    string          `json:"toolUseID"`
	UseID3    string          `json:"tool_call_id"`
	Result    json.RawMessage `json:"result"`
	Output    json.RawMessage `json:"output"`
	Error     string          `json:"error"`
	IsError   bool            `json:"is_error"`
	State     *struct {
		Input  json.RawMessage `json:"input"`
		Output json.RawMessage `json:"output"`
		Error  string          `json:"error"`
		Status string          `json:"status"`
	} `json:"state"`
}

// text is the first of raws that holds text: a string, or blocks of
// text.
func text(raws ...json.RawMessage) string {
	for _, raw := range raws {
		if len(raw) == 0 || importer.IsNull(raw) {
			continue
		}
		if t := importer.Text(importer.TextParts("", loom.PartText, raw)); strings.TrimSpace(t) != "" {
			return t
		}
		if t := importer.JSONText(raw); strings.TrimSpace(t) != "" {
			return t
		}
	}
	return ""
}

// readMessages adds session id's messages, with their parts, to t.
func readMessages(ctx context.Context, db *sql.DB, name, id string, hasParts bool, t *importer.Transcript) error {
	rows, err := db.QueryContext(ctx, `SELECT CAST(id AS TEXT), coalesce(data, ''), coalesce(CAST(time_created AS TEXT), '')
		FROM message WHERE session_id = ? ORDER BY CAST(coalesce(time_created, '') AS TEXT), id`, id)
	if err != nil {
		return err
	}
	type row struct{ id, data, at string }
	var msgs []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.data, &r.at); err != nil {
			rows.Close()
			return err
		}
		msgs = append(msgs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	parts := map[string][][2]string{}
	if hasParts {
		if parts, err = readParts(ctx, db, id); err != nil {
			return err
		}
	}
	// pending are the results of the message being read, completed once
	// it is added (a message may hold a call and its result).
	var pending []result
	for _, r := range msgs {
		var d message
		if !decode(t.Res, name, "message "+r.id, r.data, &d) {
			t.Break()
			continue
		}
		at := parseTime(r.at)
		m := &loom.Message{ID: importer.LineID(r.id), CreatedAt: at}
		switch strings.ToLower(strings.TrimSpace(d.Role)) {
		case "user":
			m.Role = loom.RoleUser
		case "assistant", "model":
			m.Role, m.Model = loom.RoleAssistant, d.model()
		case "system":
			m.Role = loom.RoleSystem
		default:
			t.Res.Skip("unknown:" + importer.TypeName(d.Role))
			continue
		}
		results := 0
		for i, pr := range parts[r.id] {
			var p part
			if !decode(t.Res, name, "part "+pr[0], pr[1], &p) {
				continue
			}
			pid := m.ID + "/" + strconv.Itoa(i)
			switch p.Type {
			case "text":
				if s := text(p.Text, p.Content, p.Value); s != "" {
					m.Parts = append(m.Parts, loom.Part{ID: pid, Type: loom.PartText, Text: s})
				}
			case "thinking", "reasoning":
				if s := cmp.Or(p.Thinking, text(p.Text, p.Content)); strings.TrimSpace(s) != "" {
					m.Parts = append(m.Parts, loom.Part{ID: pid, Type: loom.PartReasoning, Text: s})
				}
			case "tool_use", "tool":
				call, ok := toolCall(pid, p)
				if !ok {
					t.Res.Skip("unnamed-tool-call")
					continue
				}
				m.Parts = append(m.Parts, call)
			case "tool_result":
				results++
				out := text(p.Content, p.Result, p.Output)
				failed := p.IsError
				if out == "" && p.Error != "" {
					out, failed = p.Error, true
				}
				// Its call is in a message before, or in this one.
				pending = append(pending, result{cmp.Or(p.UseID, p.UseID2, p.UseID3, p.CallID, p.CallID2), out, failed, at})
			default:
				t.Res.Skip(importer.TypeName("part:" + p.Type))
			}
		}
		if len(m.Parts) > 0 || results == 0 {
			t.Add(m)
		}
		for _, r := range pending {
			t.Complete(r.callID, r.out, r.failed, r.at)
		}
		pending = pending[:0]
	}
	return nil
}

type result struct {
	callID, out string
	failed      bool
	at          time.Time
}

// toolCall is p, a tool_use or tool part, as a tool part, completed
// when its state holds its output or error.
func toolCall(pid string, p part) (loom.Part, bool) {
	name := cmp.Or(p.Name, p.ToolName, p.ToolName2, p.Tool)
	if name == "" {
		return loom.Part{}, false
	}
	input := p.Input
	if (len(input) == 0 || string(input) == "{}") && p.State != nil && len(p.State.Input) > 0 {
		input = p.State.Input
	}
	call := importer.ToolCall(pid, cmp.Or(p.ID, p.UseID, p.UseID2, p.CallID, p.CallID2), name, input)
	if p.State != nil {
		switch {
		case p.State.Error != "":
			call.Status, call.Error = loom.ToolError, p.State.Error
		case len(p.State.Output) > 0 && !importer.IsNull(p.State.Output):
			out, _ := json.Marshal(text(p.State.Output))
			call.Status, call.Output = loom.ToolCompleted, out
		}
	}
	return call, true
}

// decode decodes data, of the row what, into v: data that is not JSON,
// or holds bytes that are not UTF-8, is one problem line.
func decode(res *importer.Result, name, what, data string, v any) bool {
	if err := json.Unmarshal([]byte(data), v); err != nil {
		res.Problemf(name, 0, what+": its data is not JSON, skipped")
		return false
	}
	if !utf8.ValidString(data) {
		res.Problemf(name, 0, what+": "+importer.NotUTF8)
	}
	return true
}

// readParts are session id's parts by message: id and data, in order.
func readParts(ctx context.Context, db *sql.DB, id string) (map[string][][2]string, error) {
	cols, err := importer.SQLiteColumns(ctx, db, "part")
	if err != nil {
		return nil, err
	}
	order := "id"
	if cols["time_created"] {
		order = "CAST(coalesce(time_created, '') AS TEXT), id"
	}
	rows, err := db.QueryContext(ctx, `SELECT CAST(id AS TEXT), CAST(message_id AS TEXT), coalesce(data, '') FROM part WHERE session_id = ? ORDER BY `+order, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][][2]string{}
	for rows.Next() {
		var pid, mid, data string
		if err := rows.Scan(&pid, &mid, &data); err != nil {
			return nil, err
		}
		out[mid] = append(out[mid], [2]string{pid, data})
	}
	return out, rows.Err()
}

// readUsage are session id's model calls.
func readUsage(ctx context.Context, db *sql.DB, id string) ([]usage, error) {
	rows, err := db.QueryContext(ctx, `SELECT coalesce(model_id, ''), coalesce(CAST(completed_at AS TEXT), CAST(started_at AS TEXT), ''),
		coalesce(input_tokens, 0), coalesce(output_tokens, 0), coalesce(reasoning_tokens, 0),
		coalesce(cache_creation_input_tokens, 0), coalesce(cache_read_input_tokens, 0)
		FROM model_usage WHERE session_id = ? ORDER BY coalesce(completed_at, started_at), rowid`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []usage
	for rows.Next() {
		var u usage
		var end string
		if err := rows.Scan(&u.model, &end, &u.u.InputTokens, &u.u.OutputTokens, &u.u.ReasoningTokens, &u.u.CacheWriteTokens, &u.u.CacheReadTokens); err != nil {
			return nil, err
		}
		u.end, u.u.APICalls = parseTime(end), 1
		out = append(out, u)
	}
	return out, rows.Err()
}

// giveUsage adds each model call's tokens to the last reply of msgs made
// by its end (the last reply when none was, or it has no end).
func giveUsage(msgs []*loom.Message, us []usage) {
	for _, u := range us {
		var to *loom.Message
		for _, m := range msgs {
			if m.Role != loom.RoleAssistant {
				continue
			}
			if to == nil || u.end.IsZero() || !m.CreatedAt.After(u.end) {
				to = m
			}
		}
		if to == nil {
			continue
		}
		to.Usage.Add(u.u)
		to.Model = cmp.Or(to.Model, u.model)
	}
}
