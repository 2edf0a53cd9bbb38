package goose

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// maxRecord bounds one message's content column: a larger one is a
// problem, not read.
const maxRecord = 64 << 20

// sessionColumns are the sessions table's columns the reader uses, in
// the order it scans them; a column an older schema lacks is read as
// NULL (name came with schema 4, provider_name and model_config_json
// with 6, the accumulated counts earlier still).
var sessionColumns = []string{
	"id", "name", "description", "working_dir", "created_at", "updated_at",
	"provider_name", "model_config_json",
	"accumulated_input_tokens", "accumulated_output_tokens", "input_tokens", "output_tokens",
}

// readDB reads every session of goose's database, one at a time, each
// query its own short read transaction (see importer.OpenSQLite).
func readDB(ctx context.Context, path string, wal bool) (*importer.Result, error) {
	db, err := importer.OpenSQLite(ctx, Tool, path, wal, func(ctx context.Context, db *sql.DB) error {
		n, err := importer.SQLiteTables(ctx, db, "sessions", "messages")
		if err == nil && n != 2 {
			err = errors.New("not a goose database: no sessions and messages tables")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r := &dbReader{db: db, path: path, res: &importer.Result{}}
	sessions, err := r.sessions(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range sessions {
		if err := r.messages(ctx, s); err != nil {
			return nil, err
		}
		if len(s.Messages) == 0 {
			// goose makes a session when it starts, before a prompt.
			r.res.Skip("empty-session")
			continue
		}
		r.res.Sessions = append(r.res.Sessions, s.Session)
	}
	return r.res, nil
}

type dbReader struct {
	db   *sql.DB
	path string
	res  *importer.Result
	// messageID and metadata are whether messages has goose's
	// message_id column (schema 7 and later) and metadata_json (3).
	messageID, metadata bool
}

// dbSession is a session row: the session, and its usage to put on its
// last reply.
type dbSession struct {
	*importer.Session
	usage loom.Usage
}

func (r *dbReader) fail(err error) error { return importer.SQLiteError(Tool, r.path, err) }

func (r *dbReader) sessions(ctx context.Context) ([]dbSession, error) {
	have, err := importer.SQLiteColumns(ctx, r.db, "sessions")
	if err != nil {
		return nil, r.fail(err)
	}
	if !have["id"] {
		return nil, fmt.Errorf("goose: %s: sessions table has no id column", r.path)
	}
	cols, err := importer.SQLiteColumns(ctx, r.db, "messages")
	if err != nil {
		return nil, r.fail(err)
	}
	r.messageID, r.metadata = cols["message_id"], cols["metadata_json"]
	order := importer.SQLiteOrder(have, "created_at", "id")
	rows, err := r.db.QueryContext(ctx, "SELECT "+importer.SQLiteSelect(have, sessionColumns)+" FROM sessions ORDER BY "+order)
	if err != nil {
		return nil, r.fail(err)
	}
	defer rows.Close()
	var out []dbSession
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, len(sessionColumns))
		if err != nil {
			return nil, r.fail(err)
		}
		str := importer.SQLiteString
		s := &importer.Session{
			SourceID:  str(v[0]),
			Kind:      loom.KindMain,
			Title:     strings.TrimSpace(str(v[1])),
			Cwd:       str(v[3]),
			Path:      r.path,
			CreatedAt: parseTime(str(v[4])),
			UpdatedAt: parseTime(str(v[5])),
			Provider:  str(v[6]),
			Model:     modelName(str(v[7])),
		}
		if s.SourceID == "" || strings.ContainsAny(s.SourceID, "\n\r") {
			r.res.Problemf(r.path, 0, "session without a usable id")
			continue
		}
		if s.Title == "" {
			s.Title = strings.TrimSpace(str(v[2]))
		}
		out = append(out, dbSession{Session: s, usage: usage(num(v[8]), num(v[9]), num(v[10]), num(v[11]))})
	}
	if err := rows.Err(); err != nil {
		return nil, r.fail(err)
	}
	return out, nil
}

// messages reads s's messages in the order goose wrote them (rowid:
// goose rewrites a whole conversation in order when it replaces it).
func (r *dbReader) messages(ctx context.Context, s dbSession) error {
	mid, md := "NULL", "NULL"
	if r.messageID {
		mid = "message_id"
	}
	if r.metadata {
		md = "metadata_json"
	}
	rows, err := r.db.QueryContext(ctx, `SELECT id, `+mid+`, role, created_timestamp,
		CASE WHEN octet_length(content_json) > ? THEN NULL ELSE content_json END, octet_length(content_json), `+md+`
		FROM messages WHERE session_id = ? ORDER BY id`, maxRecord, s.SourceID)
	if err != nil {
		return r.fail(err)
	}
	defer rows.Close()
	c := newConv(r.res, s.Model, s.Provider)
	seen := map[string]bool{}
	for rows.Next() {
		var rowid, msgID, role, created, content, size, metadata any
		if err := rows.Scan(&rowid, &msgID, &role, &created, &content, &size, &metadata); err != nil {
			return r.fail(err)
		}
		str := importer.SQLiteString
		// Before schema 7 a message's id is its row's, which goose's
		// migration 7 made its message_id in the same form.
		id := str(msgID)
		if id == "" {
			id = "msg_" + s.SourceID + "_" + str(rowid)
		}
		switch {
		case seen[id]:
			r.res.Skip("duplicate-message")
			continue
		case importer.SQLiteFloat(size) > maxRecord:
			r.res.Problemf(r.path, 0, "message "+id+": content larger than "+strconv.Itoa(maxRecord>>20)+" MiB")
			continue
		case content == nil:
			r.res.Problemf(r.path, 0, "message "+id+": no content")
			continue
		}
		seen[id] = true
		src := source{ID: id, Role: str(role), Created: seconds(importer.SQLiteFloat(created)), Content: json.RawMessage(str(content)), File: r.path}
		md := str(metadata)
		if md != "" && json.Unmarshal([]byte(md), &src.Meta) != nil {
			r.res.Problemf(r.path, 0, "message "+id+": metadata that is not JSON, read as none")
		} else if raw := []byte(str(content)); !utf8.ValidString(md) || json.Valid(raw) && !utf8.Valid(raw) {
			r.res.Problemf(r.path, 0, "message "+id+": "+importer.NotUTF8)
		}
		c.add(src)
	}
	if err := rows.Err(); err != nil {
		return r.fail(err)
	}
	s.Messages = c.finish(s.usage)
	if len(s.Messages) > 0 {
		if s.CreatedAt.IsZero() {
			s.CreatedAt = s.Messages[0].CreatedAt
		}
		if last := s.Messages[len(s.Messages)-1].CreatedAt; s.UpdatedAt.IsZero() || last.After(s.UpdatedAt) {
			s.UpdatedAt = last
		}
	}
	return nil
}

// modelName is the model of a session's model_config_json.
func modelName(cfg string) string {
	var m struct {
		ModelName string `json:"model_name"`
	}
	if cfg == "" || json.Unmarshal([]byte(cfg), &m) != nil {
		return ""
	}
	return m.ModelName
}

// num reads an optional integer column.
func num(v any) *int64 {
	if v == nil {
		return nil
	}
	n := int64(importer.SQLiteFloat(v))
	if n < 0 || n > 1e15 {
		n = 0
	}
	return &n
}
