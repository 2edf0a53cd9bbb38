// Package amazonq reads the conversations of Amazon Q Developer CLI
// (the q chat command) for loom's importer.
//
// Q keeps its state in a SQLite database, data.sqlite3, in
// ~/.local/share/amazon-q on Linux and ~/Library/Application
// Support/amazon-q on macOS ($XDG_DATA_HOME replaces ~/.local/share).
// Its conversations table holds one row per working directory: the key
// is the directory, the value the conversation's state as JSON (its
// conversation_id, history of entries, each a user message and the
// assistant's answer, and the latest /compact summary). A user message
// is a Prompt, ToolUseResults or CancelledToolUses; an answer is a
// Response or a ToolUse with its tool_uses (id, name, args).
//
// What becomes what: one session per row, keyed by the conversation's
// id, its working directory the row's key; a prompt a user message
// (with its time), a result completes its call, an answer an assistant
// message (text and calls, dated by the end of its stream where the
// entry's request_metadata keeps it, as Kiro CLI's do, else at its
// prompt's time); the latest summary a summary message. Q
// keeps no token counts in the state. Q overwrites a directory's row
// when a new conversation starts there, so only the latest of each
// directory is on disk.
//
// Q is a Rust program that is not on npm: the fixtures are written to
// the types of its source (crates/chat-cli/src/cli/chat/conversation.rs
// and message.rs) and what public readers of the database show.
package amazonq

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Amazon Q Developer CLI's conversations.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Amazon Q Developer CLI's name in loom.
const Tool = "amazon-q"

const dbName = "data.sqlite3"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Amazon's Bedrock, which serves Q's models.
func (Format) Provider() string { return "amazon-bedrock" }

// Roots are Q's data directories on Linux and macOS.
func (Format) Roots(env func(string) string, home string) []string {
	var out []string
	if d := importer.ToolDir(env, home, "XDG_DATA_HOME", ".local", "share"); d != "" {
		out = append(out, filepath.Join(d, "amazon-q"))
	}
	if home != "" {
		out = append(out, filepath.Join(home, "Library", "Application Support", "amazon-q"))
	}
	return out
}

// Bundles is the database (with its write-ahead log).
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.DBBundles(Tool, root, dbName)
}

// CountSessions counts the database's conversations: those of
// conversations_v2 and those of the earlier table it does not hold.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	n, err := importer.CountSQLite(ctx, Tool, b, `SELECT (SELECT count(*) FROM conversations_v2) + (SELECT count(*) FROM conversations
		WHERE coalesce(json_extract(value, '$.conversation_id'), '') NOT IN (SELECT conversation_id FROM conversations_v2))`,
		"conversations", "conversations_v2")
	if err == nil {
		return n, nil
	}
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(*) FROM conversations", "conversations")
}

// Read reads every conversation of the database: Q 1.x's later
// table, conversations_v2 (several conversations a directory, each
// under its id, with its times), and the earlier one-a-directory table
// for what the later does not hold.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, db, err := importer.OpenDBBundle(ctx, Tool, "Amazon Q", b, "conversations")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	res := &importer.Result{}
	modified := time.Now().UTC()
	if fi, err := os.Stat(name); err == nil {
		modified = fi.ModTime().UTC()
	}
	seen := map[string]bool{}
	if n, err := importer.SQLiteTables(ctx, db, "conversations_v2"); err == nil && n == 1 {
		err := readTable(ctx, db, name, res, `SELECT key, CASE WHEN length(value) > ? THEN NULL ELSE value END, updated_at
			FROM conversations_v2 ORDER BY created_at, rowid`, func(s *importer.Session) bool {
			seen[s.SourceID] = true
			return true
		}, modified)
		if err != nil {
			return nil, err
		}
	}
	err = readTable(ctx, db, name, res, "SELECT key, CASE WHEN length(value) > ? THEN NULL ELSE value END, NULL FROM conversations ORDER BY rowid",
		func(s *importer.Session) bool { return !seen[s.SourceID] }, modified)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// readTable reads the conversations query q gives (a directory, a
// conversation's state, its update time in milliseconds or NULL),
// keeping each that keep accepts.
func readTable(ctx context.Context, db *sql.DB, name string, res *importer.Result, q string, keep func(*importer.Session) bool, modified time.Time) error {
	rows, err := db.QueryContext(ctx, q, importer.MaxLine)
	if err != nil {
		return importer.SQLiteError(Tool, name, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		v, err := importer.SQLiteRow(rows, 3)
		if err != nil {
			return importer.SQLiteError(Tool, name, err)
		}
		key, value := importer.SQLiteString(v[0]), importer.SQLiteString(v[1])
		if value == "" {
			res.Problemf(name, 0, "conversation of "+importer.Clip(key, 120)+": too large or empty")
			continue
		}
		at := modified
		if ms := importer.SQLiteFloat(v[2]); ms > 0 {
			at = importer.Millis(ms)
		}
		if s := conversation(res, name, key, []byte(value), at); s != nil && keep(s) {
			res.Sessions = append(res.Sessions, s)
		}
	}
	if err := rows.Err(); err != nil {
		return importer.SQLiteError(Tool, name, err)
	}
	return nil
}

type state struct {
	ConversationID string            `json:"conversation_id"`
	History        []json.RawMessage `json:"history"`
	LatestSummary  []json.RawMessage `json:"latest_summary"`
	ModelInfo      struct {
		ModelID string `json:"model_id"`
	} `json:"model_info"`
}

type entry struct {
	User struct {
		Timestamp string `json:"timestamp"`
		Content   struct {
			Prompt *struct {
				Prompt string `json:"prompt"`
			} `json:"Prompt"`
			Results *struct {
				Results []result `json:"tool_use_results"`
			} `json:"ToolUseResults"`
			Cancelled *struct {
				Prompt  string   `json:"prompt"`
				Results []result `json:"tool_use_results"`
			} `json:"CancelledToolUses"`
		} `json:"content"`
	} `json:"user"`
	Assistant struct {
		Response *answer `json:"Response"`
		ToolUse  *answer `json:"ToolUse"`
	} `json:"assistant"`
	// Kiro CLI (Q's successor) times the answer: the end of its stream,
	// in milliseconds.
	Request struct {
		StreamEnd float64 `json:"stream_end_timestamp_ms"`
	} `json:"request_metadata"`
}

type result struct {
	ID      string            `json:"tool_use_id"`
	Content []json.RawMessage `json:"content"`
	Status  string            `json:"status"`
}

type answer struct {
	MessageID string `json:"message_id"`
	Content   string `json:"content"`
	ToolUses  []struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"tool_uses"`
}

// conversation is the session of one row.
func conversation(res *importer.Result, file, cwd string, value []byte, at time.Time) *importer.Session {
	var st state
	if err := json.Unmarshal(value, &st); err != nil {
		res.Problemf(file, 0, "conversation of "+importer.Clip(cwd, 120)+": "+err.Error())
		return nil
	}
	if !utf8.Valid(value) {
		res.Problemf(file, 0, "conversation of "+importer.Clip(cwd, 120)+": "+importer.NotUTF8)
	}
	t := &importer.Transcript{Res: res}
	for i, raw := range st.History {
		var e entry
		// Versions up to 1.13 kept an entry as a [user, assistant] pair.
		var pair []json.RawMessage
		if json.Unmarshal(raw, &pair) == nil && len(pair) == 2 {
			raw, _ = json.Marshal(map[string]json.RawMessage{"user": pair[0], "assistant": pair[1]})
		}
		if json.Unmarshal(raw, &e) != nil {
			res.Problemf(file, 0, "conversation "+importer.Clip(st.ConversationID, 64)+": entry "+strconv.Itoa(i)+" is not a history entry")
			continue
		}
		if tm := importer.ISOTime(e.User.Timestamp); !tm.IsZero() {
			at = tm
		}
		mid := strconv.Itoa(i)
		c := e.User.Content
		prompt := ""
		var results []result
		switch {
		case c.Prompt != nil:
			prompt = c.Prompt.Prompt
		case c.Results != nil:
			results = c.Results.Results
		case c.Cancelled != nil:
			prompt, results = c.Cancelled.Prompt, c.Cancelled.Results
		}
		for _, r := range results {
			var texts []string
			for _, b := range r.Content {
				var blk struct {
					Text *string         `json:"Text"`
					JSON json.RawMessage `json:"Json"`
				}
				if json.Unmarshal(b, &blk) == nil {
					if blk.Text != nil {
						texts = append(texts, *blk.Text)
					} else if len(blk.JSON) > 0 {
						texts = append(texts, string(blk.JSON))
					}
				}
			}
			t.Complete(r.ID, strings.Join(texts, "\n"), r.Status == "Error", at)
		}
		if strings.TrimSpace(prompt) != "" {
			t.Add(&loom.Message{ID: mid + "/u", Role: loom.RoleUser, CreatedAt: at, Parts: []loom.Part{{ID: mid + "/u/0", Type: loom.PartText, Text: prompt}}})
		}
		a := cmp.Or(e.Assistant.ToolUse, e.Assistant.Response)
		if a == nil {
			continue
		}
		var parts []loom.Part
		if strings.TrimSpace(a.Content) != "" {
			parts = append(parts, loom.Part{ID: mid + "/a/text", Type: loom.PartText, Text: a.Content})
		}
		for j, u := range a.ToolUses {
			parts = append(parts, importer.ToolCall(mid+"/a/call/"+strconv.Itoa(j), u.ID, u.Name, u.Args))
		}
		// The answer is dated when its stream ended, where that is
		// kept (never before the prompt); else at the prompt's time.
		reply := at
		if ms := e.Request.StreamEnd; ms > 0 && importer.Millis(ms).After(at) {
			reply = importer.Millis(ms)
		}
		if m := t.Join(mid+"/a", loom.RoleAssistant, reply, parts...); m != nil && m.Role == loom.RoleAssistant {
			m.Model = st.ModelInfo.ModelID
			if m.CompletedAt == nil || m.CompletedAt.Before(reply) {
				done := reply
				m.CompletedAt = &done
			}
		}
		at = reply
	}
	if len(st.LatestSummary) > 0 {
		var sum string
		if json.Unmarshal(st.LatestSummary[0], &sum) == nil && strings.TrimSpace(sum) != "" {
			t.Add(&loom.Message{ID: "summary", Role: loom.RoleSummary, CreatedAt: at, Parts: []loom.Part{{ID: "summary/0", Type: loom.PartText, Text: sum}}})
		}
	}
	s := t.Session(cmp.Or(importer.LineID(st.ConversationID), importer.LineID(cwd)), file)
	if s != nil {
		s.Cwd, s.Model = cwd, st.ModelInfo.ModelID
	}
	return s
}
