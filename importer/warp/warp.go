// Package warp reads the conversations of Warp's agent (the Warp
// terminal's Agent Mode) for loom's importer.
//
// Warp keeps its state in a SQLite database, warp.sqlite, in
// ~/.local/state/warp-terminal on Linux ($XDG_STATE_HOME replaces
// ~/.local/state) and under Warp's group container on macOS. Its
// ai_queries table holds each prompt of a conversation (conversation
// id, time, the input as JSON with the query's text, the model, the
// working directory), and agent_tasks each task of a conversation as a
// protobuf message (task.go): its prompts, the agent's replies and
// reasoning, its tool calls and their results, summaries, and its
// parent task.
//
// What becomes what: one session per conversation, the first working
// directory the session's. Where the conversation's tasks are kept, its
// root tasks' messages are the session's (a query a user message, the
// output and reasoning a reply, a tool call completed by its result, a
// summarization a summary message) and a task with a parent task is a
// sub-agent of it; else its prompts alone, each a user message at its
// time. Warp keeps no usage per call on disk.
//
// Warp is not on npm: the tests build a database of Warp's own schema
// (crates/persistence of warpdotdev/warp at
// 19548aec6285e82b1a4cde526e7ec7e04513c248) holding tasks encoded to
// its API's task.proto (warpdotdev/warp-proto-apis at
// 00f791620e0c4016e33f298176f7cf785b1026ad).
package warp

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Warp's agent conversations.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Warp's name in loom.
const Tool = "warp"

const dbName = "warp.sqlite"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Warp's.
func (Format) Provider() string { return "warp" }

// Roots are Warp's state directories on Linux and macOS.
func (Format) Roots(env func(string) string, home string) []string {
	var out []string
	if d := importer.ToolDir(env, home, "XDG_STATE_HOME", ".local", "state"); d != "" {
		out = append(out, filepath.Join(d, "warp-terminal"))
	}
	if home != "" {
		out = append(out, filepath.Join(home, "Library", "Group Containers", "2BBY89MBSN.dev.warp", "Library", "Application Support", "dev.warp.Warp-Stable"))
	}
	return out
}

// Bundles is the database.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.DBBundles(Tool, root, dbName)
}

// CountSessions counts the sessions an import makes of the database:
// its conversations and the sub-agents of their tasks, which only the
// tasks' records tell (a task names its parent inside its record), so
// the database is read as an import reads it.
func (f Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	res, err := f.Read(ctx, b)
	if err != nil {
		return 0, err
	}
	return len(res.Sessions), nil
}

// Read reads every conversation's prompts.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, db, err := importer.OpenDBBundle(ctx, Tool, "Warp", b, "ai_queries")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT conversation_id, exchange_id, start_ts, CASE WHEN length(input) > ? THEN NULL ELSE input END, model_id, working_directory
		FROM ai_queries ORDER BY conversation_id, start_ts`, importer.MaxLine)
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	defer rows.Close()
	res := &importer.Result{}
	var s *importer.Session
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, 6)
		if err != nil {
			return nil, importer.SQLiteError(Tool, name, err)
		}
		conv := importer.LineID(importer.SQLiteString(v[0]))
		if conv == "" {
			res.Problemf(name, 0, "a query without a conversation")
			continue
		}
		if s == nil || s.SourceID != conv {
			if s != nil {
				res.Keep(s, "conversation")
			}
			s = &importer.Session{SourceID: conv, Kind: loom.KindMain, Path: name}
		}
		at := stamp(importer.SQLiteString(v[2]))
		text := query(importer.SQLiteString(v[3]))
		if text == "" {
			res.Skip("query-without-text")
			continue
		}
		mid := importer.LineID(importer.SQLiteString(v[1]))
		if mid == "" {
			mid = strconv.Itoa(len(s.Messages))
		}
		s.Messages = append(s.Messages, &loom.Message{ID: mid, Role: loom.RoleUser, CreatedAt: at, CompletedAt: &at, Model: importer.SQLiteString(v[4]),
			Parts: []loom.Part{{ID: mid + "/0", Type: loom.PartText, Text: text}}})
		if s.Cwd == "" {
			s.Cwd = importer.SQLiteString(v[5])
		}
		s.UpdatedAt = at
	}
	if err := rows.Err(); err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	if s != nil {
		res.Keep(s, "conversation")
	}
	rows.Close()
	if n, err := importer.SQLiteTables(ctx, db, "agent_tasks"); err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	} else if n == 1 {
		if err := readTasks(ctx, db, name, res); err != nil {
			return nil, importer.SQLiteError(Tool, name, err)
		}
	}
	return res, nil
}

// readTasks reads each conversation's tasks: its root tasks are the
// conversation's session (in place of its prompts alone, whose working
// directory and model it keeps), each task with a parent a sub-agent
// of it, linked to the call whose result names the task.
func readTasks(ctx context.Context, db *sql.DB, name string, res *importer.Result) error {
	rows, err := db.QueryContext(ctx, `SELECT conversation_id, task_id, task, last_modified_at FROM agent_tasks WHERE length(task) <= ? ORDER BY conversation_id, id`, importer.MaxLine)
	if err != nil {
		return err
	}
	type conv struct {
		id    string
		tasks []task
		at    time.Time
	}
	var convs []*conv
	for rows.Next() {
		var c, id, at string
		var blob []byte
		if err := rows.Scan(&c, &id, &blob, &at); err != nil {
			rows.Close()
			return err
		}
		c = importer.LineID(c)
		tk, ok := decodeTask(blob)
		if !ok || c == "" {
			res.Problemf(name, 0, "task "+importer.Clip(id, 64)+": not Warp's task")
			continue
		}
		tk.id = cmp.Or(tk.id, id)
		if len(convs) == 0 || convs[len(convs)-1].id != c {
			convs = append(convs, &conv{id: c, at: stamp(at)})
		}
		convs[len(convs)-1].tasks = append(convs[len(convs)-1].tasks, tk)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	prompts := map[string]*importer.Session{}
	for _, s := range res.Sessions {
		prompts[s.SourceID] = s
	}
	for _, c := range convs {
		if err := ctx.Err(); err != nil {
			return err
		}
		ids := map[string]bool{}
		for _, tk := range c.tasks {
			ids[tk.id] = true
		}
		sub := func(out string) string {
			for _, tk := range c.tasks {
				if tk.parent != "" && ids[tk.parent] && tk.id != "" && strings.Contains(out, tk.id) {
					return c.id + "/" + importer.LineID(tk.id)
				}
			}
			return ""
		}
		main := &importer.Transcript{Res: res}
		var subs []*importer.Session
		for _, tk := range c.tasks {
			if tk.parent == "" || !ids[tk.parent] {
				transcript(main, tk, c.at, res, sub)
				continue
			}
			tr := &importer.Transcript{Res: res}
			transcript(tr, tk, c.at, res, sub)
			if s := tr.Session(c.id+"/"+importer.LineID(tk.id), name); s != nil {
				s.Kind, s.ParentSourceID = loom.KindSubagent, c.id
				subs = append(subs, s)
			}
		}
		s := main.Session(c.id, name)
		if s == nil {
			continue
		}
		if p := prompts[c.id]; p != nil {
			// The prompts alone, read above, give way to the whole.
			s.Cwd, s.Title = p.Cwd, p.Title
			*p = *s
		} else {
			res.Sessions = append(res.Sessions, s)
		}
		for _, sb := range subs {
			sb.Cwd = s.Cwd
		}
		res.Sessions = append(res.Sessions, subs...)
	}
	return nil
}

// query is the text of a query's input: [{"Query": {"text": …}}].
func query(input string) string {
	var items []struct {
		Query struct {
			Text string `json:"text"`
		} `json:"Query"`
	}
	if json.Unmarshal([]byte(input), &items) != nil || len(items) == 0 {
		return ""
	}
	return strings.TrimSpace(items[0].Query.Text)
}

// stamp reads Warp's times (UTC, with or without fractions).
func stamp(s string) time.Time {
	for _, layout := range []string{"2006-01-02 15:04:05.999999", time.RFC3339Nano} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t.UTC()
		}
	}
	return time.Unix(0, 0).UTC()
}
