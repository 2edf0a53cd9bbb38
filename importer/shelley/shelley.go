// Package shelley reads the conversations of Shelley (exe.dev's coding
// agent, a Go program with a web interface) for loom's importer.
//
// Shelley keeps every conversation in one SQLite database,
// ~/.config/shelley/shelley.db ($SHELLEY_DB names another, as its
// program's --db flag does): the conversations table (conversation_id,
// slug, cwd, model, parent_conversation_id for a sub-agent's, created_at,
// updated_at) and the messages table, an append-only log (message_id,
// conversation_id, sequence_id, type, llm_data, usage_data, created_at,
// model_name). A message's llm_data is its llm.Message as JSON: Role (0
// user, 1 assistant) and Content, each with a numeric Type (2 text,
// 3 thinking, 4 redacted thinking, 5 tool use, 6 tool result, 7–9 the
// provider's web search) and Text, Thinking, ID, ToolName, ToolInput,
// ToolUseID, ToolError, ToolResult (contents) and the tool's times.
// usage_data is the call's llm.Usage (input_tokens,
// cache_creation_input_tokens, cache_read_input_tokens, output_tokens,
// cost_usd, model).
//
// A conversation is a session, a sub-agent's linked to its parent by its
// parent_conversation_id; each user or agent message a message, its
// text, thinking and tool uses its parts, a tool use completed by the
// tool result of a later user message (which adds no message when it
// holds nothing else), each agent message's usage its call's. The types
// only Shelley's interface shows (error, gitinfo, warning, modelchange)
// and system messages are counted as skipped, and so is a slug message,
// whose call only named the conversation.
//
// Learnt from Shelley's source (boldsoftware/shelley at
// a38c350249816325ff2ed9c852d2cc102b56dbc9: db/schema/, db/db.go,
// llm/llm.go, server/server.go, and its previous-conversations skill for
// the database's place); the database in the tests is built by the test
// with those tables' columns, and Shelley was not run here.
package shelley

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

// Format reads Shelley's database. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Shelley's name in loom.
const Tool = "shelley"

const dbName = "shelley.db"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Anthropic's, Shelley's first; each reply names its model.
func (Format) Provider() string { return "anthropic" }

// Roots are $SHELLEY_DB when set, else ~/.config/shelley.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.HomeDirs(env, home, "SHELLEY_DB", []string{".config", "shelley"})
}

// Bundles is the database under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.DBBundles(Tool, root, dbName)
}

// CountSessions counts the conversations.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(*) FROM conversations", "conversations", "messages")
}

// The content types of llm.Message.
const (
	contentText = 2 + iota
	contentThinking
	contentRedactedThinking
	contentToolUse
	contentToolResult
)

type llmMessage struct {
	Role    int       `json:"Role"`
	Content []content `json:"Content"`
}

type content struct {
	ID         string          `json:"ID"`
	Type       int             `json:"Type"`
	Text       string          `json:"Text"`
	Thinking   string          `json:"Thinking"`
	ToolName   string          `json:"ToolName"`
	ToolInput  json.RawMessage `json:"ToolInput"`
	ToolUseID  string          `json:"ToolUseID"`
	ToolError  bool            `json:"ToolError"`
	ToolResult []content       `json:"ToolResult"`
	EndTime    *time.Time      `json:"ToolUseEndTime"`
}

type usage struct {
	Input      float64 `json:"input_tokens"`
	CacheWrite float64 `json:"cache_creation_input_tokens"`
	CacheRead  float64 `json:"cache_read_input_tokens"`
	Output     float64 `json:"output_tokens"`
	Cost       float64 `json:"cost_usd"`
	Model      string  `json:"model"`
}

type conversation struct {
	id, slug, cwd, model, parent string
	created, updated             time.Time
	t                            *importer.Transcript
}

// Read reads every conversation of the database.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, db, err := importer.OpenDBBundle(ctx, Tool, "Shelley", b, "conversations", "messages")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	have, err := importer.SQLiteColumns(ctx, db, "conversations")
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	res := &importer.Result{}
	convs := map[string]*conversation{}
	var order []string
	cols := []string{"conversation_id", "slug", "cwd", "model", "parent_conversation_id", "created_at", "updated_at"}
	rows, err := db.QueryContext(ctx, "SELECT "+importer.SQLiteSelect(have, cols)+" FROM conversations ORDER BY created_at, conversation_id")
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, len(cols))
		if err != nil {
			rows.Close()
			return nil, importer.SQLiteError(Tool, name, err)
		}
		c := &conversation{id: importer.SQLiteString(v[0]), slug: importer.SQLiteString(v[1]), cwd: importer.SQLiteString(v[2]),
			model: importer.SQLiteString(v[3]), parent: importer.SQLiteString(v[4]),
			created: dbTime(v[5]), updated: dbTime(v[6]), t: &importer.Transcript{Res: res}}
		if c.id == "" {
			continue
		}
		convs[c.id] = c
		order = append(order, c.id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	if err := readMessages(ctx, db, name, res, convs); err != nil {
		return nil, err
	}
	for _, id := range order {
		c := convs[id]
		s := &importer.Session{SourceID: importer.LineID(c.id), Kind: loom.KindMain, Path: name, Title: importer.Clip(c.slug, 200),
			Cwd: c.cwd, Model: c.model, Messages: c.t.Msgs, CreatedAt: c.created, UpdatedAt: c.updated}
		if p, ok := convs[c.parent]; ok && c.parent != "" && p != c {
			s.Kind, s.ParentSourceID = loom.KindSubagent, importer.LineID(c.parent)
		}
		res.Keep(s, "session")
	}
	return res, nil
}

// readMessages reads the messages of the conversations, each in its
// conversation's order.
func readMessages(ctx context.Context, db *sql.DB, name string, res *importer.Result, convs map[string]*conversation) error {
	have, err := importer.SQLiteColumns(ctx, db, "messages")
	if err != nil {
		return importer.SQLiteError(Tool, name, err)
	}
	order := "created_at, rowid"
	if have["sequence_id"] {
		order = "sequence_id, rowid"
	}
	cols := []string{"message_id", "conversation_id", "type", "llm_data", "usage_data", "created_at", "model_name"}
	// A message too large to read is left out by the query (its
	// llm_data read as NULL), never loaded.
	sel := strings.Replace(importer.SQLiteSelect(have, cols), `"llm_data"`,
		`CASE WHEN length("llm_data") > `+strconv.Itoa(importer.MaxLine)+` THEN NULL ELSE "llm_data" END`, 1)
	rows, err := db.QueryContext(ctx, "SELECT "+sel+" FROM messages ORDER BY conversation_id, "+order)
	if err != nil {
		return importer.SQLiteError(Tool, name, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		v, err := importer.SQLiteRow(rows, len(cols))
		if err != nil {
			return importer.SQLiteError(Tool, name, err)
		}
		c := convs[importer.SQLiteString(v[1])]
		if c == nil {
			res.Skip("message-of-no-conversation")
			continue
		}
		if msg := rowMessage(name, res, c, v); msg != nil {
			c.t.Add(msg)
		}
	}
	if err := rows.Err(); err != nil {
		return importer.SQLiteError(Tool, name, err)
	}
	return nil
}

// rowMessage is the message of row v of the messages table, one of
// conversation c's; nil when it holds none (skipped, a problem, or a
// tool's result, which completes its call).
func rowMessage(name string, res *importer.Result, c *conversation, v []any) *loom.Message {
	mid := importer.LineID(importer.SQLiteString(v[0]))
	typ, data, use := importer.SQLiteString(v[2]), importer.SQLiteString(v[3]), importer.SQLiteString(v[4])
	at := dbTime(v[5])
	switch typ {
	case "user", "agent", "tool":
	case "slug":
		res.Skip("slug-call")
		return nil
	default:
		res.Skip(importer.TypeName(typ))
		return nil
	}
	if data == "" {
		res.Problemf(name, 0, "message "+mid+": no llm_data, or more than loom reads")
		return nil
	}
	var m llmMessage
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		res.Problemf(name, 0, "message "+mid+": llm_data that is not Shelley's: "+err.Error())
		return nil
	}
	if !utf8.ValidString(data) {
		res.Problemf(name, 0, "message "+mid+": "+importer.NotUTF8)
	}
	msg := &loom.Message{ID: mid, CreatedAt: at, Role: loom.RoleUser}
	if m.Role == 1 {
		msg.Role, msg.Model = loom.RoleAssistant, cmp.Or(importer.SQLiteString(v[6]), c.model)
	}
	msg.Parts = contentParts(res, c, mid, m.Content, at)
	if len(msg.Parts) == 0 {
		return nil
	}
	if msg.Role == loom.RoleAssistant && use != "" {
		var u usage
		if json.Unmarshal([]byte(use), &u) == nil {
			msg.Usage = loom.Usage{InputTokens: importer.Tokens(u.Input), CacheWriteTokens: importer.Tokens(u.CacheWrite),
				CacheReadTokens: importer.Tokens(u.CacheRead), OutputTokens: importer.Tokens(u.Output), CostUSD: importer.Dollars(u.Cost)}
			if !msg.Usage.IsZero() {
				msg.Usage.APICalls = 1
			}
			msg.Model = cmp.Or(u.Model, msg.Model)
		}
	}
	return msg
}

// contentParts are the parts of message mid's contents; a tool's result
// completes its call in c instead.
func contentParts(res *importer.Result, c *conversation, mid string, contents []content, at time.Time) []loom.Part {
	var parts []loom.Part
	for i, ct := range contents {
		pid := mid + "/" + strconv.Itoa(i)
		switch ct.Type {
		case contentText:
			if strings.TrimSpace(ct.Text) != "" {
				parts = append(parts, loom.Part{ID: pid, Type: loom.PartText, Text: ct.Text})
			}
		case contentThinking:
			if strings.TrimSpace(ct.Thinking) != "" {
				parts = append(parts, loom.Part{ID: pid, Type: loom.PartReasoning, Text: ct.Thinking})
			}
		case contentToolUse:
			parts = append(parts, importer.ToolCall(pid, ct.ID, ct.ToolName, ct.ToolInput))
		case contentToolResult:
			end := at
			if ct.EndTime != nil && !ct.EndTime.IsZero() {
				end = ct.EndTime.UTC()
			}
			c.t.Complete(importer.LineID(ct.ToolUseID), resultText(ct.ToolResult), ct.ToolError, end)
		case contentRedactedThinking:
			res.Skip("redacted-thinking")
		default:
			res.Skip("content:" + strconv.Itoa(ct.Type))
		}
	}
	return parts
}

// resultText is the text of a tool result's contents.
func resultText(cs []content) string {
	var out []string
	for _, c := range cs {
		if c.Type == contentText && c.Text != "" {
			out = append(out, c.Text)
		}
	}
	return strings.Join(out, "\n")
}

// dbTime is a DATETIME column's value: SQLite's text form, or a time.
func dbTime(v any) time.Time {
	switch x := v.(type) {
	case time.Time:
		return x.UTC()
	case string, []byte:
		s := strings.TrimSpace(importer.SQLiteString(x))
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t.UTC()
			}
		}
	}
	return time.Time{}
}
