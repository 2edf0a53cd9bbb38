// Package warp reads the conversations of Warp's agent (the Warp
// terminal's Agent Mode) for loom's importer.
//
// Warp keeps its state in a SQLite database, warp.sqlite, in
// ~/.local/state/warp-terminal on Linux ($XDG_STATE_HOME replaces
// ~/.local/state) and under Warp's group container on macOS. Its
// ai_queries table holds each prompt of a conversation (conversation
// id, time, the input as JSON with the query's text, the model, the
// working directory); the replies are not kept on this machine, only
// their usage totals in agent_conversations.
//
// What becomes what: one session per conversation, each prompt a user
// message at its time, the first working directory the session's.
// Replies and tool calls are not imported: Warp does not write them to
// disk.
//
// Warp is not on npm: the tests build a database of the schema
// agentsview's reader reads.
package warp

import (
	"context"
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

// CountSessions counts the conversations with a prompt.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(DISTINCT conversation_id) FROM ai_queries", "ai_queries")
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
	return res, nil
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
