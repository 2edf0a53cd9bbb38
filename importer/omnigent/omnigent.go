// Package omnigent reads the sessions of Omnigent (omnigent-ai/omnigent,
// a harness that runs other coding agents and its own) for loom's
// importer.
//
// Omnigent keeps every session in one SQLite database, chat.db in its
// data directory (~/.omnigent, $OMNIGENT_DATA_DIR): conversations (id,
// times, title, the parent and root conversation, per-session overrides
// such as the model), conversation_items (one row an item of a
// conversation, at its position: type and its data as JSON) and
// omnigent_conversation_metadata (kind, default or sub_agent; the
// sub-agent's name; workspace and git branch). Its schema changed across
// its generations: ids are text or 16-byte uuids, types and kinds names
// or codes (omnigent/db/enum_codecs.py), and earlier ones kept the model
// override in agent_configuration; all are read. Beside the transcripts
// the same file keeps the server's users and their password hashes,
// invitation and device tokens, hosts' tokens, policies and files.
//
// What becomes what: each conversation is a session; a message item is
// a user or assistant message of its text blocks (one marked is_meta,
// context Omnigent injects, a system message); reasoning (its summary),
// function calls completed by their outputs and an assistant's texts
// make one reply until the next prompt; a compaction is a summary
// message. Errors, slash and terminal commands, routing decisions,
// native tools and resource events are counted as skipped. A
// sub-agent's conversation is a sub-agent session of its parent.
//
// What is kept of the database (importer.Filtered): not the file, which
// holds those secrets, but a database of the columns this reader reads
// of conversations, conversation_items, omnigent_conversation_metadata
// and agent_configuration, which a reimport reads as it reads chat.db.
//
// Learnt from its source (omnigent-ai/omnigent at
// 79ee2e981bafa75e1e70b598643d1283308d4490: omnigent/db/db_models.py,
// its tables; enum_codecs.py, its codes; omnigent/entities/
// conversation.py, each item's data) and agentsview's reader of it
// (kenn-io/agentsview at 538600744d1b87614d3746d36a0966c1f2ac1cad,
// internal/parser/omnigent.go and the items of testdata/omnigent/). The
// database in testdata is built to that schema (testdata/README.md).
package omnigent

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Omnigent's chat.db. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Omnigent's name in loom.
const Tool = "omnigent"

const dbName = "chat.db"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is none: Omnigent runs the models of many.
func (Format) Provider() string { return "" }

// Roots are $OMNIGENT_DATA_DIR when set, else ~/.omnigent.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.HomeDirs(env, home, "OMNIGENT_DATA_DIR", []string{".omnigent"})
}

// Bundles is the database (with its write-ahead log).
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.DBBundles(Tool, root, dbName)
}

// CountSessions counts the conversations.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(*) FROM conversations", "conversations", "conversation_items")
}

// itemTypes are the names of conversation_items' type codes.
var itemTypes = map[string]string{
	"1": "message", "2": "function_call", "3": "function_call_output", "4": "reasoning", "5": "error",
	"6": "compaction", "7": "native_tool", "8": "resource_event", "9": "routing_decision",
	"10": "slash_command", "11": "terminal_command",
}

// schema is what a database's generation has.
type schema struct {
	conv, items, meta, agentConf map[string]bool
	// types are the declared types of the columns, by table.column.
	types map[string]string
}

func (s schema) has(table, col string) bool {
	switch table {
	case "conversations":
		return s.conv[col]
	case "conversation_items":
		return s.items[col]
	case "omnigent_conversation_metadata":
		return s.meta[col]
	case "agent_configuration":
		return s.agentConf[col]
	}
	return false
}

// binary says whether column holds 16-byte uuids.
func (s schema) binary(table, col string) bool {
	return strings.Contains(strings.ToUpper(s.types[table+"."+col]), "BLOB")
}

// kept are the columns read of each table: what a kept copy holds.
var kept = map[string][]string{
	"conversations":                  {"workspace_id", "id", "created_at", "updated_at", "title", "parent_conversation_id", "root_conversation_id", "session_overrides", "kind", "sub_agent_name", "workspace", "git_branch"},
	"conversation_items":             {"workspace_id", "conversation_id", "id", "created_at", "position", "type", "data"},
	"omnigent_conversation_metadata": {"workspace_id", "id", "kind", "sub_agent_name", "workspace", "git_branch"},
	"agent_configuration":            {"workspace_id", "conversation_id", "model_override"},
}

func readSchema(ctx context.Context, db *sql.DB) (schema, error) {
	s := schema{types: map[string]string{}}
	for _, table := range []string{"conversations", "conversation_items", "omnigent_conversation_metadata", "agent_configuration"} {
		cols, err := columnTypes(ctx, db, table)
		if err != nil {
			return s, err
		}
		have := map[string]bool{}
		for c, typ := range cols {
			have[c] = true
			s.types[table+"."+c] = typ
		}
		switch table {
		case "conversations":
			s.conv = have
		case "conversation_items":
			s.items = have
		case "omnigent_conversation_metadata":
			s.meta = have
		case "agent_configuration":
			s.agentConf = have
		}
	}
	return s, nil
}

// columnTypes are table's columns with their declared types; none when
// there is no such table.
func columnTypes(ctx context.Context, db *sql.DB, table string) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT name, type FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, err
		}
		out[name] = typ
	}
	return out, rows.Err()
}

// col is an expression of table alias a's column col read as text (a
// uuid as lowercase hex), an empty text when the generation has no
// such column.
func (s schema) col(table, a, col string) string {
	if !s.has(table, col) {
		return "''"
	}
	if s.binary(table, col) {
		return "coalesce(lower(hex(" + a + "." + col + ")), '')"
	}
	return "coalesce(CAST(" + a + "." + col + " AS TEXT), '')"
}

type conversation struct {
	id, created, updated, title, parent, root, overrides string
	kind, subName, workspace, branch, model              string
}

// Read reads every conversation of the database.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, db, err := importer.OpenDBBundle(ctx, Tool, "Omnigent", b, "conversations", "conversation_items")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	sc, err := readSchema(ctx, db)
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	convs, err := readConversations(ctx, db, sc)
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	byID := map[string]conversation{}
	for _, c := range convs {
		byID[c.id] = c
	}
	res := &importer.Result{}
	var subs []*importer.Session
	for _, c := range convs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := &importer.Transcript{Res: res}
		if err := readItems(ctx, db, sc, name, c.id, t); err != nil {
			return nil, importer.SQLiteError(Tool, name, err)
		}
		s := t.Session(importer.LineID(c.id), name)
		if s == nil {
			continue
		}
		if root, ok := byID[c.root]; ok {
			c.workspace, c.branch = cmp.Or(c.workspace, root.workspace), cmp.Or(c.branch, root.branch)
		}
		s.Title = importer.Clip(strings.TrimSpace(cmp.Or(c.title, c.subName)), 200)
		s.Cwd, s.GitBranch, s.Model = c.workspace, c.branch, c.model
		s.CreatedAt = cmp.Or(importer.UnixTime(number(c.created)), s.CreatedAt)
		s.UpdatedAt = cmp.Or(importer.UnixTime(number(c.updated)), s.UpdatedAt)
		if (c.kind == "sub_agent" || c.kind == "2") && c.parent != "" && c.parent != c.id {
			s.Kind, s.ParentSourceID = loom.KindSubagent, importer.LineID(c.parent)
			subs = append(subs, s)
			continue
		}
		res.Keep(s, "session")
	}
	// Sub-agents after the sessions that ran them.
	for _, s := range subs {
		res.Keep(s, "session")
	}
	return res, nil
}

func number(s string) float64 {
	f, _ := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f
}

func readConversations(ctx context.Context, db *sql.DB, sc schema) ([]conversation, error) {
	// Each of the metadata's fields from its table, else from
	// conversations where an earlier generation kept it.
	meta := func(col string) string {
		if sc.has("omnigent_conversation_metadata", col) {
			return sc.col("omnigent_conversation_metadata", "m", col)
		}
		return sc.col("conversations", "c", col)
	}
	join := ""
	if len(sc.meta) > 0 && sc.has("omnigent_conversation_metadata", "id") {
		join = " LEFT JOIN omnigent_conversation_metadata m ON m.id = c.id"
		if sc.has("omnigent_conversation_metadata", "workspace_id") && sc.has("conversations", "workspace_id") {
			join += " AND m.workspace_id = c.workspace_id"
		}
	}
	model := "''"
	if sc.has("agent_configuration", "model_override") && sc.has("agent_configuration", "conversation_id") {
		model = "coalesce((SELECT a.model_override FROM agent_configuration a WHERE a.conversation_id = c.id LIMIT 1), '')"
	}
	q := "SELECT " + strings.Join([]string{
		sc.col("conversations", "c", "id"), sc.col("conversations", "c", "created_at"), sc.col("conversations", "c", "updated_at"),
		sc.col("conversations", "c", "title"), sc.col("conversations", "c", "parent_conversation_id"),
		sc.col("conversations", "c", "root_conversation_id"), sc.col("conversations", "c", "session_overrides"),
		meta("kind"), meta("sub_agent_name"), meta("workspace"), meta("git_branch"), model,
	}, ", ") + " FROM conversations c" + join + " ORDER BY c.created_at, c.rowid"
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []conversation
	for rows.Next() {
		var c conversation
		if err := rows.Scan(&c.id, &c.created, &c.updated, &c.title, &c.parent, &c.root, &c.overrides,
			&c.kind, &c.subName, &c.workspace, &c.branch, &c.model); err != nil {
			return nil, err
		}
		var o struct {
			Model *string `json:"model_override"`
		}
		if json.Unmarshal([]byte(c.overrides), &o) == nil && o.Model != nil {
			c.model = *o.Model
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

type content []struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type itemData struct {
	Role      string  `json:"role"`
	Content   content `json:"content"`
	IsMeta    bool    `json:"is_meta"`
	Name      string  `json:"name"`
	Arguments string  `json:"arguments"`
	CallID    string  `json:"call_id"`
	Output    string  `json:"output"`
	Summary   json.RawMessage
	Model     string `json:"model"`
}

// readItems adds the items of conversation id to t.
func readItems(ctx context.Context, db *sql.DB, sc schema, name, id string, t *importer.Transcript) error {
	where := "conversation_id = ?"
	var arg any = id
	if sc.binary("conversation_items", "conversation_id") {
		where = "lower(hex(conversation_id)) = ?"
	}
	created := "0"
	if sc.has("conversation_items", "created_at") {
		created = "coalesce(created_at, 0)"
	}
	rows, err := db.QueryContext(ctx, "SELECT coalesce(position, rowid), coalesce(CAST(type AS TEXT), ''), coalesce(data, ''), "+created+
		" FROM conversation_items WHERE "+where+" ORDER BY position, rowid", arg)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var pos int64
		var typ, data string
		var at float64
		if err := rows.Scan(&pos, &typ, &data, &at); err != nil {
			return err
		}
		where := fmt.Sprintf("conversation %s, item at position %d", id, pos)
		// One line an item: data that is not JSON is skipped; data read
		// with bytes that are not UTF-8 (decoding made them U+FFFD, in
		// silence) is kept and said.
		if !item(t, pos, cmp.Or(itemTypes[typ], typ), data, importer.UnixTime(at)) {
			t.Res.Problemf(name, 0, where+": its data is not JSON, skipped")
		} else if !utf8.ValidString(data) {
			t.Res.Problemf(name, 0, where+": "+importer.NotUTF8)
		}
	}
	return rows.Err()
}

// item adds one item, at position pos, of type typ, and reports
// whether its data could be read.
func item(t *importer.Transcript, pos int64, typ, data string, at time.Time) bool {
	res := t.Res
	var d itemData
	var raw map[string]json.RawMessage
	if json.Unmarshal([]byte(data), &raw) != nil || json.Unmarshal([]byte(data), &d) != nil {
		// The next reply is one of its own, never joined to the one
		// before what is lost.
		t.Break()
		return false
	}
	d.Summary = raw["summary"]
	mid := "p" + strconv.FormatInt(pos, 10)
	switch typ {
	case "message":
		parts := texts(mid, d.Content)
		switch {
		case d.Role == "user" && !d.IsMeta:
			t.Add(&loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: at, Parts: parts})
		case d.IsMeta:
			t.Add(&loom.Message{ID: mid, Role: loom.RoleSystem, CreatedAt: at, Parts: parts})
		case d.Role == "assistant":
			// Its parts under the reply's id when they join it (Join),
			// under their own message's else: <position>/<n> either way.
			t.Join(mid, loom.RoleAssistant, at, parts...)
		default:
			res.Skip("unknown:" + importer.TypeName(d.Role))
		}
	case "reasoning":
		var sum content
		_ = json.Unmarshal(d.Summary, &sum)
		var lines []string
		for _, c := range append(sum, d.Content...) {
			if strings.TrimSpace(c.Text) != "" {
				lines = append(lines, c.Text)
			}
		}
		if len(lines) > 0 {
			t.Join(mid, loom.RoleAssistant, at, loom.Part{ID: mid + "/0", Type: loom.PartReasoning, Text: strings.Join(lines, "\n")})
		}
	case "function_call":
		t.Join(mid, loom.RoleAssistant, at, importer.ToolCall(mid+"/0", d.CallID, d.Name, json.RawMessage(d.Arguments)))
	case "function_call_output":
		t.Complete(d.CallID, d.Output, false, at)
	case "compaction":
		var sum string
		if json.Unmarshal(d.Summary, &sum) == nil && strings.TrimSpace(sum) != "" {
			t.Add(&loom.Message{ID: mid, Role: loom.RoleSummary, CreatedAt: at, Usage: loom.Usage{Compactions: 1},
				Parts: []loom.Part{{ID: mid + "/0", Type: loom.PartText, Text: sum}}})
		}
	default:
		res.Skip(importer.TypeName(typ))
	}
	return true
}

// texts are the text blocks of c as text parts, ids <mid>/<n>.
func texts(mid string, c content) []loom.Part {
	var out []loom.Part
	for _, b := range c {
		if strings.TrimSpace(b.Text) != "" && (b.Type == "" || strings.HasSuffix(b.Type, "text")) {
			out = append(out, loom.Part{ID: mid + "/" + strconv.Itoa(len(out)), Type: loom.PartText, Text: b.Text})
		}
	}
	return out
}

// KeptCopy writes, in dir, a database of what Read reads of the
// bundle's chat.db and nothing else (importer.Filtered): the columns of
// kept of its tables, their rows; no user, token, host, policy or file
// of Omnigent's server.
func (Format) KeptCopy(ctx context.Context, b importer.Bundle, dir string) (string, error) {
	_, src, err := importer.OpenDBBundle(ctx, Tool, "Omnigent", b, "conversations", "conversation_items")
	if err != nil {
		return "", err
	}
	defer src.Close()
	out := filepath.Join(dir, dbName)
	dst, err := sql.Open("sqlite", "file:"+out+"?_pragma=journal_mode(DELETE)")
	if err != nil {
		return "", fmt.Errorf("%s: %w", Tool, err)
	}
	defer dst.Close()
	dst.SetMaxOpenConns(1)
	tables := make([]string, 0, len(kept))
	for t := range kept {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	for _, table := range tables {
		types, err := columnTypes(ctx, src, table)
		if err != nil {
			return "", fmt.Errorf("%s: %w", Tool, err)
		}
		var cols, defs []string
		for _, c := range kept[table] {
			if typ, ok := types[c]; ok {
				cols = append(cols, `"`+c+`"`)
				defs = append(defs, `"`+c+`" `+typ)
			}
		}
		if len(cols) == 0 {
			continue
		}
		if _, err := dst.ExecContext(ctx, `CREATE TABLE "`+table+`" (`+strings.Join(defs, ", ")+`)`); err != nil {
			return "", fmt.Errorf("%s: %w", Tool, err)
		}
		if err := copyRows(ctx, src, dst, table, cols); err != nil {
			return "", fmt.Errorf("%s: copying %s: %w", Tool, table, err)
		}
	}
	return out, dst.Close()
}

// copyRows copies cols of table's rows from src to dst, in one
// transaction.
func copyRows(ctx context.Context, src, dst *sql.DB, table string, cols []string) error {
	rows, err := src.QueryContext(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM "`+table+`" ORDER BY rowid`)
	if err != nil {
		return err
	}
	defer rows.Close()
	tx, err := dst.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO "`+table+`" (`+strings.Join(cols, ", ")+`) VALUES (?`+strings.Repeat(", ?", len(cols)-1)+`)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if _, err := ins.ExecContext(ctx, vals...); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return tx.Commit()
}
