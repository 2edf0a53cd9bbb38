// Package piebald reads the chats of Piebald (a desktop app for
// coding agents) for loom's importer.
//
// Piebald keeps its chats in a SQLite database, app.db, in its data
// directory (~/.local/share/piebald on Linux, ~/Library/Application
// Support/piebald on macOS, %APPDATA%\piebald on Windows): chats (id,
// title, times, is_deleted, current_directory, branch_name, the
// project's id: projects keep its directory), messages (each of one
// chat, with its parent message: a tree whose forks are edits and
// regenerations, enabled marking the branch kept; role, model, time,
// and its tokens: input, output, reasoning, cache read and write), and
// each message's parts in order: a text (message_part_text, whether
// thinking, its text the message_node_text of its content nodes) or a
// tool call (message_part_tool_call: the provider's call id, the
// tool's name, input, result or error, state, and the chat a
// sub-agent ran it in).
//
// What becomes what: each chat not deleted is a session under its id,
// its messages the branch from the root that takes, at each fork, the
// last enabled child (the others counted as skipped); a text is text
// or reasoning, a call a tool part with its result or error; a message
// has its tokens as usage. A chat a sub-agent call ran in is a
// sub-agent session of the chat that called it.
//
// Learnt from agentsview's reader of it (kenn-io/agentsview at
// 538600744d1b87614d3746d36a0966c1f2ac1cad, internal/parser/piebald.go
// and the schema its tests build in piebald_test.go) and Piebald's own
// reader of the database in splitrail (Piebald-AI/splitrail at
// ce6abfe35d5767a485ebca187f2f07d6ea77217e, src/analyzers/piebald.rs);
// the app cannot run here. testdata/app.db is built to that schema
// (testdata/README.md).
package piebald

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Piebald's chats. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Piebald's name in loom.
const Tool = "piebald"

const dbName = "app.db"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is none: Piebald runs the models of many.
func (Format) Provider() string { return "" }

// Roots are $LOOM_PIEBALD_DIR when set, else Piebald's data directory
// on Linux, macOS and Windows.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.HomeDirs(env, home, "LOOM_PIEBALD_DIR",
		[]string{".local", "share", "piebald"},
		[]string{"Library", "Application Support", "piebald"},
		[]string{"AppData", "Roaming", "piebald"})
}

// Bundles is the database (with its write-ahead log).
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.DBBundles(Tool, root, dbName)
}

// CountSessions counts the chats not deleted.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(*) FROM chats WHERE coalesce(is_deleted, 0) = 0", "chats", "messages")
}

type chat struct {
	id                      int64
	title, created, updated string
	cwd, branch             string
}

type message struct {
	id, parent        int64
	hasParent, enable bool
	role, model, at   string
	usage             loom.Usage
}

// Read reads every chat of the database.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, db, err := importer.OpenDBBundle(ctx, Tool, "Piebald", b, "chats", "messages", "message_parts")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	chats, err := readChats(ctx, db)
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	callers, err := subAgents(ctx, db)
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	res := &importer.Result{}
	for _, c := range chats {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		msgs, err := readMessages(ctx, db, c.id)
		if err != nil {
			return nil, importer.SQLiteError(Tool, name, err)
		}
		branch := mainBranch(msgs)
		for range len(msgs) - len(branch) {
			res.Skip("off-branch")
		}
		t := &importer.Transcript{Res: res}
		for _, m := range branch {
			msg, err := readParts(ctx, db, m, res, name)
			if err != nil {
				return nil, importer.SQLiteError(Tool, name, err)
			}
			if msg == nil {
				res.Skip("unknown:" + importer.TypeName(m.role))
				continue
			}
			t.Add(msg)
		}
		id := strconv.FormatInt(c.id, 10)
		s := t.Session(id, name)
		if s == nil {
			continue
		}
		s.Title, s.Cwd, s.GitBranch = importer.Clip(strings.TrimSpace(c.title), 200), c.cwd, c.branch
		s.CreatedAt, s.UpdatedAt = cmp.Or(importer.ISOTime(c.created), s.CreatedAt), cmp.Or(importer.ISOTime(c.updated), s.UpdatedAt)
		if p, ok := callers[c.id]; ok && p != c.id {
			s.Kind, s.ParentSourceID = loom.KindSubagent, strconv.FormatInt(p, 10)
		}
		if m := importer.LastModelReply(s.Messages); m != nil {
			s.Model = m.Model
		}
		res.Keep(s, "session")
	}
	return res, nil
}

func readChats(ctx context.Context, db *sql.DB) ([]chat, error) {
	rows, err := db.QueryContext(ctx, `SELECT c.id, coalesce(c.title, ''), coalesce(c.created_at, ''), coalesce(c.updated_at, c.created_at, ''),
		coalesce(nullif(c.current_directory, ''), p.directory, ''), coalesce(c.branch_name, '')
		FROM chats c LEFT JOIN projects p ON p.id = c.project_id
		WHERE coalesce(c.is_deleted, 0) = 0 ORDER BY c.created_at, c.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []chat
	for rows.Next() {
		var c chat
		if err := rows.Scan(&c.id, &c.title, &c.created, &c.updated, &c.cwd, &c.branch); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// subAgents are the chats sub-agents ran in, each with the chat whose
// call ran it.
func subAgents(ctx context.Context, db *sql.DB) (map[int64]int64, error) {
	out := map[int64]int64{}
	if n, err := importer.SQLiteTables(ctx, db, "message_part_tool_call"); err != nil || n == 0 {
		return out, err
	}
	rows, err := db.QueryContext(ctx, `SELECT tc.sub_agent_chat_id, m.parent_chat_id FROM message_part_tool_call tc
		JOIN message_parts p ON p.id = tc.message_part_id JOIN messages m ON m.id = p.parent_chat_message_id
		WHERE tc.sub_agent_chat_id IS NOT NULL`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var sub, parent int64
		if err := rows.Scan(&sub, &parent); err != nil {
			return nil, err
		}
		out[sub] = parent
	}
	return out, rows.Err()
}

func readMessages(ctx context.Context, db *sql.DB, chatID int64) ([]message, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, parent_message_id, coalesce(enabled, 1), coalesce(role, ''), coalesce(model, ''), coalesce(created_at, ''),
		coalesce(input_tokens, 0), coalesce(output_tokens, 0), coalesce(reasoning_tokens, 0), coalesce(cache_read_tokens, 0), coalesce(cache_write_tokens, 0)
		FROM messages WHERE parent_chat_id = ? ORDER BY created_at, id`, chatID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []message
	for rows.Next() {
		var m message
		var parent sql.NullInt64
		var enabled int64
		u := &m.usage
		if err := rows.Scan(&m.id, &parent, &enabled, &m.role, &m.model, &m.at,
			&u.InputTokens, &u.OutputTokens, &u.ReasoningTokens, &u.CacheReadTokens, &u.CacheWriteTokens); err != nil {
			return nil, err
		}
		m.parent, m.hasParent, m.enable = parent.Int64, parent.Valid, enabled != 0
		out = append(out, m)
	}
	return out, rows.Err()
}

// mainBranch is the branch of msgs from their first root that takes,
// at each fork, the last enabled child (the last child when none is).
func mainBranch(msgs []message) []message {
	byID := map[int64]bool{}
	for _, m := range msgs {
		byID[m.id] = true
	}
	children := map[int64][]message{}
	var roots []message
	for _, m := range msgs {
		if m.hasParent && byID[m.parent] && m.parent != m.id {
			children[m.parent] = append(children[m.parent], m)
		} else {
			roots = append(roots, m)
		}
	}
	if len(roots) == 0 {
		return nil
	}
	out := []message{roots[0]}
	seen := map[int64]bool{roots[0].id: true}
	for cur := roots[0]; ; {
		kids := children[cur.id]
		if len(kids) == 0 {
			break
		}
		next := kids[len(kids)-1]
		for i := len(kids) - 1; i >= 0; i-- {
			if kids[i].enable {
				next = kids[i]
				break
			}
		}
		if seen[next.id] {
			break
		}
		seen[next.id] = true
		out = append(out, next)
		cur = next
	}
	return out
}

// readParts is m as a message with its parts, nil when its role is
// neither the user's nor the assistant's.
func readParts(ctx context.Context, db *sql.DB, m message, res *importer.Result, path string) (*loom.Message, error) {
	mid := strconv.FormatInt(m.id, 10)
	msg := &loom.Message{ID: mid, CreatedAt: importer.ISOTime(m.at)}
	switch m.role {
	case "user":
		msg.Role = loom.RoleUser
	case "assistant":
		msg.Role, msg.Model, msg.Usage = loom.RoleAssistant, m.model, m.usage
	default:
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT p.id, p.part_type, coalesce(tx.is_thinking, 0),
		(SELECT group_concat(content, '') FROM (SELECT nt.content FROM message_content_nodes cn JOIN message_node_text nt ON nt.node_id = cn.id
			WHERE cn.parent_text_part_id = p.id AND cn.node_type = 'text' ORDER BY cn.node_index, cn.id)),
		tc.provider_tool_use_id, tc.tool_name, tc.tool_input, tc.tool_result, tc.tool_error, coalesce(tc.tool_state, '')
		FROM message_parts p LEFT JOIN message_part_text tx ON tx.message_part_id = p.id
		LEFT JOIN message_part_tool_call tc ON tc.message_part_id = p.id
		WHERE p.parent_chat_message_id = ? ORDER BY p.part_index, p.id`, m.id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var pid int64
		var typ string
		var thinking int64
		var text, callID, tool, input, result, failure sql.NullString
		var state string
		if err := rows.Scan(&pid, &typ, &thinking, &text, &callID, &tool, &input, &result, &failure, &state); err != nil {
			return nil, err
		}
		id := mid + "/" + strconv.FormatInt(pid, 10)
		switch typ {
		case "text":
			if strings.TrimSpace(text.String) == "" {
				continue
			}
			kind := loom.PartText
			if thinking != 0 {
				kind = loom.PartReasoning
			}
			msg.Parts = append(msg.Parts, loom.Part{ID: id, Type: kind, Text: text.String})
		case "tool_call":
			// A tool's input is JSON: one that is not (damaged), or that
			// holds bytes that are not UTF-8, is a problem, the call kept
			// with its input as text.
			if in := []byte(input.String); len(bytes.TrimSpace(in)) > 0 && !json.Valid(in) {
				res.Problemf(path, 0, "message "+mid+", part "+strconv.FormatInt(pid, 10)+": tool input is not JSON, kept as text")
			} else if !utf8.Valid(in) {
				res.Problemf(path, 0, "message "+mid+", part "+strconv.FormatInt(pid, 10)+": tool input: "+importer.NotUTF8)
			}
			p := importer.ToolCall(id, callID.String, tool.String, []byte(input.String))
			switch {
			case failure.Valid:
				p.Status, p.Error = loom.ToolError, cmp.Or(failure.String, "failed")
			case result.Valid:
				out, _ := json.Marshal(result.String)
				p.Status, p.Output = loom.ToolCompleted, out
			case state == "completed":
				p.Status = loom.ToolCompleted
			}
			msg.Parts = append(msg.Parts, p)
		}
	}
	return msg, rows.Err()
}
