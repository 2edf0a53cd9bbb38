// Package forge reads the conversations of Forge (forgecode, Antinomy's
// coding agent) for loom's importer.
//
// Forge keeps its conversations in a SQLite database, .forge.db, in its
// directory: $FORGE_CONFIG when set, else ~/forge when it exists (its
// earlier place), else ~/.forge. The conversations table holds one row
// per conversation: its id, title, workspace, the times, and its
// context as JSON: the messages Forge sends the model, each a text
// message (a role, its content, the prompt as the user typed it, tool
// calls, reasoning details, the model), a tool result (the call's name
// and id, and its output: values of text, or of a sub-agent's answer
// naming that agent's conversation) or an image, most with the usage of
// the model call that made them.
//
// What becomes what: one session per conversation with a message, under
// Forge's id, titled with its title; its system messages are counted as
// skipped; a user message is a prompt (the text the user typed when
// Forge kept it beside the one it sent), or a system message when Forge
// marks it droppable (context it added of its own accord); an assistant
// message is a reply with its text, its reasoning in clear, its tool
// calls, each completed by the tool result that answers it, and its
// usage (prompt tokens less the cached ones as input, the cached as
// cache reads, completion tokens as output, its cost); a tool result
// that names a sub-agent's conversation makes that conversation a
// sub-agent of this one, linked by an agent part after the call.
//
// Not imported: what a compaction replaced (Forge rewrites the stored
// context in place; its summary stays as the message Forge put there),
// images' data, the tool definitions and the metrics row (files
// changed). Forge is not on npm (it is installed from its own
// releases), so the tests build databases of its schema, with contexts
// written to its record types.
package forge

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Forge's conversations.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Forge's name in loom: the surface of its imported sessions and
// the TOOL of `loom session import --from TOOL`.
const Tool = "forge"

// EnvConfig is the variable that moves Forge's directory.
const EnvConfig = "FORGE_CONFIG"

const dbName = ".forge.db"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": each reply names its model.
func (Format) Provider() string { return "" }

// Roots is Forge's directory: $FORGE_CONFIG, else ~/forge and
// ~/.forge (a machine that ran an earlier Forge may have either).
func (Format) Roots(env func(string) string, home string) []string {
	if d := importer.EnvPath(env, home)(EnvConfig); d != "" {
		return []string{d}
	}
	if home == "" {
		return nil
	}
	return []string{filepath.Join(home, "forge"), filepath.Join(home, ".forge")}
}

// Bundles is the database: root itself, or its .forge.db.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.DBBundles(Tool, root, dbName)
}

// CountSessions counts the conversations with a context.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(*) FROM conversations WHERE context IS NOT NULL", "conversations")
}

// Read reads every conversation.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, db, err := importer.OpenDBBundle(ctx, Tool, "Forge", b, "conversations")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT conversation_id, title, created_at, updated_at, CASE WHEN length(context) > ? THEN NULL ELSE context END
		FROM conversations WHERE context IS NOT NULL ORDER BY created_at, conversation_id`, importer.MaxDocument)
	if err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	defer rows.Close()
	res := &importer.Result{}
	var sessions []*importer.Session
	parents := map[string]string{} // sub-agent conversation → parent
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, 5)
		if err != nil {
			return nil, importer.SQLiteError(Tool, name, err)
		}
		id := importer.LineID(importer.SQLiteString(v[0]))
		if id == "" {
			res.Problemf(name, 0, "a conversation without an id")
			continue
		}
		data := importer.SQLiteString(v[4])
		if data == "" {
			res.Problemf(name, 0, "conversation "+id+": its context is larger than "+fmt.Sprint(importer.MaxDocument)+" bytes")
			continue
		}
		created := when(v[2])
		if created.IsZero() {
			created = when(v[3])
		}
		if created.IsZero() {
			res.Problemf(name, 0, "conversation "+id+" has no time")
			continue
		}
		s := read(res, name, id, []byte(data), created, parents)
		if s == nil {
			continue
		}
		s.Title = importer.SQLiteString(v[1])
		if at := when(v[3]); !at.IsZero() {
			s.UpdatedAt = at
		}
		sessions = append(sessions, s)
	}
	if err := rows.Err(); err != nil {
		return nil, importer.SQLiteError(Tool, name, err)
	}
	res.Sessions = order(sessions, parents)
	return res, nil
}

// order makes each sub-agent's conversation a sub-agent of its parent's
// and puts every parent before its sub-agents, as the importer writes
// them.
func order(sessions []*importer.Session, parents map[string]string) []*importer.Session {
	byID := map[string]*importer.Session{}
	for _, s := range sessions {
		byID[s.SourceID] = s
	}
	var out []*importer.Session
	done := map[string]bool{}
	var add func(s *importer.Session, depth int)
	add = func(s *importer.Session, depth int) {
		if done[s.SourceID] {
			return
		}
		if p := byID[parents[s.SourceID]]; p != nil && p != s && depth < 64 {
			add(p, depth+1)
			s.Kind, s.ParentSourceID = loom.KindSubagent, p.SourceID
		}
		if !done[s.SourceID] {
			done[s.SourceID] = true
			out = append(out, s)
		}
	}
	for _, s := range sessions {
		add(s, 0)
	}
	return out
}

// when is a time column: the driver's time for a TIMESTAMP column, or
// its text (stamp).
func when(v any) time.Time {
	if t, ok := v.(time.Time); ok {
		if t.Year() < 1970 || t.Year() > 9999 {
			return time.Time{}
		}
		return t.UTC()
	}
	return stamp(importer.SQLiteString(v))
}

// stamp is a time as SQLite keeps Forge's (2025-09-12 06:54:05.123456,
// UTC), or RFC 3339; the zero time for anything else.
func stamp(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil && t.Year() >= 1970 && t.Year() <= 9999 {
			return t.UTC()
		}
	}
	return time.Time{}
}
