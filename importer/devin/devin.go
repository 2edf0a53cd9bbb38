// Package devin reads the sessions of Devin's command-line agent
// (Cognition's devin command) for loom's importer.
//
// Devin keeps its sessions in one SQLite database, cli/sessions.db of
// its data directory (~/.local/share/devin on Linux, ~/Library/
// Application Support/devin on macOS): the sessions table (id, title,
// working_directory, model, created_at and last_activity_at in Unix
// seconds, hidden, main_chain_id) and message_nodes (row_id, node_id,
// parent_node_id, session_id, chat_message, created_at). The nodes are a
// forest (a retried or edited message branches): the conversation is
// the chain from the session's main_chain_id, the leaf, back through
// parent_node_id to its root; a session without one is all its nodes
// in time order. A node's chat_message is a message as the chat APIs
// send it: role (user, assistant, system, tool), content (text, or
// parts of type text and thinking), thinking, tool_calls (id, and
// function's name and arguments, or name and arguments), tool_call_id
// for a tool's result, and metadata: generation_model and metrics
// (input_tokens, output_tokens, cache_read_tokens,
// cache_creation_tokens).
//
// Each user and assistant node is a message, an assistant node's usage
// its call's; a tool node completes its call; system nodes and hidden
// sessions are counted as skipped. The transcripts Devin also writes
// (cli/transcripts/<id>.json) hold the same conversation and are not
// read.
//
// Learnt from agentsview's reader of Devin's database (wesm/agentsview
// at a5de5daca0005d2794f6fe8e0412795cb2873e4b, internal/parser/devin.go);
// Devin's CLI is not on npm, and the database in the tests is built to
// that reader's tables and columns.
package devin

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

// Format reads Devin's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Devin's name in loom.
const Tool = "devin"

const dbName = "sessions.db"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Cognition's, whose service answers Devin.
func (Format) Provider() string { return "cognition" }

// Roots are $LOOM_DEVIN_DIR when set, else the cli directory of Devin's
// data directory on Linux and macOS.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.HomeDirs(env, home, "LOOM_DEVIN_DIR",
		[]string{".local", "share", "devin", "cli"}, []string{"Library", "Application Support", "devin", "cli"})
}

// Bundles is the database under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.DBBundles(Tool, root, dbName)
}

// CountSessions counts the sessions that are not hidden.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(*) FROM sessions WHERE coalesce(hidden, 0) <> 1", "sessions", "message_nodes")
}

type node struct {
	id, parent int64
	hasParent  bool
	at         time.Time
	message    string
}

type chatMessage struct {
	Role       string              `json:"role"`
	Content    json.RawMessage     `json:"content"`
	Thinking   string              `json:"thinking"`
	ToolCalls  []importer.FlatCall `json:"tool_calls"`
	ToolCallID string              `json:"tool_call_id"`
	Metadata   struct {
		GenerationModel string `json:"generation_model"`
		Metrics         *struct {
			Input      float64 `json:"input_tokens"`
			Output     float64 `json:"output_tokens"`
			CacheRead  float64 `json:"cache_read_tokens"`
			CacheWrite float64 `json:"cache_creation_tokens"`
		} `json:"metrics"`
	} `json:"metadata"`
}

// Read reads every session of the database.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, db, err := importer.OpenDBBundle(ctx, Tool, "Devin", b, "sessions", "message_nodes")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	have, err := importer.SQLiteColumns(ctx, db, "sessions")
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	cols := []string{"id", "title", "working_directory", "model", "created_at", "last_activity_at", "hidden", "main_chain_id"}
	rows, err := db.QueryContext(ctx, "SELECT "+importer.SQLiteSelect(have, cols)+" FROM sessions ORDER BY created_at, id")
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	type meta struct {
		id, title, cwd, model string
		created, last         time.Time
		leaf                  int64
		hasLeaf               bool
	}
	var sessions []meta
	res := &importer.Result{}
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, len(cols))
		if err != nil {
			rows.Close()
			return nil, importer.SQLiteError(Tool, name, err)
		}
		if importer.SQLiteFloat(v[6]) == 1 {
			res.Skip("hidden-session")
			continue
		}
		m := meta{id: importer.SQLiteString(v[0]), title: importer.SQLiteString(v[1]), cwd: importer.SQLiteString(v[2]),
			model: importer.SQLiteString(v[3]), created: importer.UnixTime(importer.SQLiteFloat(v[4])), last: importer.UnixTime(importer.SQLiteFloat(v[5]))}
		if v[7] != nil {
			m.leaf, m.hasLeaf = int64(importer.SQLiteFloat(v[7])), true
		}
		if m.id != "" {
			sessions = append(sessions, m)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	for _, m := range sessions {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		nodes, err := readNodes(ctx, db, name, m.id)
		if err != nil {
			return nil, err
		}
		chain := mainChain(nodes, m.leaf, m.hasLeaf)
		t := &importer.Transcript{Res: res}
		for _, n := range chain {
			add(t, name, n, m.model)
		}
		s := &importer.Session{SourceID: importer.LineID(m.id), Kind: loom.KindMain, Path: name, Title: importer.Clip(m.title, 200),
			Cwd: m.cwd, Model: m.model, Messages: t.Msgs, CreatedAt: m.created, UpdatedAt: m.last}
		res.Keep(s, "session")
	}
	return res, nil
}

// readNodes reads one session's nodes in time order; a chat_message too
// large to read is left out by the query.
func readNodes(ctx context.Context, db *sql.DB, name, session string) ([]node, error) {
	rows, err := db.QueryContext(ctx, `SELECT node_id, parent_node_id, CASE WHEN length(chat_message) > ? THEN NULL ELSE chat_message END, created_at
		FROM message_nodes WHERE session_id = ? ORDER BY created_at, row_id`, importer.MaxLine, session)
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	defer rows.Close()
	var out []node
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, 4)
		if err != nil {
			return nil, importer.SQLiteError(Tool, name, err)
		}
		n := node{id: int64(importer.SQLiteFloat(v[0])), message: importer.SQLiteString(v[2]), at: importer.UnixTime(importer.SQLiteFloat(v[3]))}
		if v[1] != nil {
			n.parent, n.hasParent = int64(importer.SQLiteFloat(v[1])), true
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// mainChain is the chain of nodes from the leaf back to its root, in
// order; all of them, in time order, when there is no leaf or the chain
// is broken (a parent missing, a cycle).
func mainChain(nodes []node, leaf int64, hasLeaf bool) []node {
	if !hasLeaf {
		return nodes
	}
	byID := make(map[int64]int, len(nodes))
	for i, n := range nodes {
		byID[n.id] = i
	}
	i, ok := byID[leaf]
	if !ok {
		return nodes
	}
	var rev []node
	for {
		if len(rev) == len(nodes) {
			return nodes
		}
		n := nodes[i]
		rev = append(rev, n)
		if !n.hasParent {
			break
		}
		if i, ok = byID[n.parent]; !ok {
			return nodes
		}
	}
	out := make([]node, len(rev))
	for k := range rev {
		out[k] = rev[len(rev)-1-k]
	}
	return out
}

// add adds node n's message to t.
func add(t *importer.Transcript, name string, n node, model string) {
	mid := "node-" + strconv.FormatInt(n.id, 10)
	if n.message == "" {
		t.Res.Problemf(name, 0, mid+": no message, or more than loom reads")
		return
	}
	var m chatMessage
	if err := json.Unmarshal([]byte(n.message), &m); err != nil {
		t.Res.Problemf(name, 0, mid+": a message that is not Devin's: "+err.Error())
		return
	}
	if !utf8.ValidString(n.message) {
		t.Res.Problemf(name, 0, mid+": "+importer.NotUTF8)
	}
	msg := &loom.Message{ID: mid, CreatedAt: n.at}
	switch m.Role {
	case "user":
		msg.Role = loom.RoleUser
	case "assistant", "agent":
		msg.Role, msg.Model = loom.RoleAssistant, cmp.Or(m.Metadata.GenerationModel, model)
	case "tool":
		t.Complete(importer.LineID(m.ToolCallID), importer.Text(importer.TextParts(mid, loom.PartText, m.Content)), false, n.at)
		return
	case "system":
		t.Res.Skip("system-message")
		return
	default:
		t.Res.Skip("unknown:" + importer.TypeName(m.Role))
		return
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	}
	var text string
	switch {
	case json.Unmarshal(m.Content, &text) == nil:
		if strings.TrimSpace(text) != "" {
			msg.Parts = append(msg.Parts, loom.Part{ID: mid + "/0", Type: loom.PartText, Text: text})
		}
	case json.Unmarshal(m.Content, &parts) == nil:
		for i, p := range parts {
			pid := mid + "/" + strconv.Itoa(i)
			switch {
			case p.Type == "thinking" && strings.TrimSpace(cmp.Or(p.Thinking, p.Text)) != "":
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartReasoning, Text: cmp.Or(p.Thinking, p.Text)})
			case (p.Type == "text" || p.Type == "") && strings.TrimSpace(p.Text) != "":
				msg.Parts = append(msg.Parts, loom.Part{ID: pid, Type: loom.PartText, Text: p.Text})
			case p.Type != "text" && p.Type != "thinking":
				t.Res.Skip("part:" + importer.TypeName(p.Type))
			}
		}
	}
	if th := strings.TrimSpace(m.Thinking); th != "" {
		msg.Parts = append([]loom.Part{{ID: mid + "/r", Type: loom.PartReasoning, Text: m.Thinking}}, msg.Parts...)
	}
	for i, c := range m.ToolCalls {
		args := c.Function.Arguments
		if len(args) == 0 {
			args = c.Arguments
		}
		msg.Parts = append(msg.Parts, importer.ToolCall(mid+"/t"+strconv.Itoa(i), c.ID, cmp.Or(c.Function.Name, c.Name), args))
	}
	if u := m.Metadata.Metrics; u != nil && msg.Role == loom.RoleAssistant {
		msg.Usage = loom.Usage{InputTokens: importer.Tokens(u.Input), OutputTokens: importer.Tokens(u.Output),
			CacheReadTokens: importer.Tokens(u.CacheRead), CacheWriteTokens: importer.Tokens(u.CacheWrite)}
		if !msg.Usage.IsZero() {
			msg.Usage.APICalls = 1
		}
	}
	t.Add(msg)
}
