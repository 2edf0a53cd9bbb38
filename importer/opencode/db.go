package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/loomhq/loom/importer"
)

const driverName = "sqlite"

// readDB reads every session of an opencode database, parents before
// the sub-agent sessions they ran.
//
// The database is opened read-only and with query_only, so that nothing
// is ever written to it, and never read past its locks (see openDB). In
// WAL mode (how opencode runs it) a reader neither blocks opencode's
// writes nor checkpoints; every query is its own short read transaction,
// so opencode's checkpoints are not held back for the whole import.
// Sessions are read one at a time: their messages and parts are queried
// per session, and a data column larger than maxRecord is reported
// without being loaded.
//
// tool names the program in errors: opencode, or a fork of it.
func readDB(ctx context.Context, tool, path string, wal bool) (*importer.Result, error) {
	db, err := openDB(ctx, tool, path, wal)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r := &dbReader{db: db, tool: tool, path: path, res: &importer.Result{}}
	sessions, err := r.sessions(ctx)
	if err != nil {
		return nil, err
	}
	for _, src := range sessions {
		if err := r.messages(ctx, src); err != nil {
			return nil, err
		}
		r.res.Sessions = append(r.res.Sessions, src.session(r.res))
		src.Messages = nil
	}
	return r.res, nil
}

// openDB opens path read-only (see importer.OpenSQLite) and checks that
// it is opencode's; wal is whether its header says it is in WAL mode.
func openDB(ctx context.Context, tool, path string, wal bool) (*sql.DB, error) {
	return importer.OpenSQLite(ctx, tool, path, wal, func(ctx context.Context, db *sql.DB) error {
		n, err := importer.SQLiteTables(ctx, db, "session", "message", "part")
		if err == nil && n != 3 {
			err = errors.New("not an opencode database: no session, message and part tables")
		}
		return err
	})
}

func (r *dbReader) error(err error) error { return importer.SQLiteError(r.tool, r.path, err) }

type dbReader struct {
	db   *sql.DB
	tool string
	path string
	res  *importer.Result
}

// sessionColumns are the session table's columns the reader uses, in
// the order sessions scans them. Columns opencode added or dropped over
// versions are read as NULL when the table has none.
var sessionColumns = []string{"id", "parent_id", "title", "directory", "version", "time_created", "time_updated", "metadata"}

// sessions reads every session's row, ordered so that a session comes
// after the one that ran it.
func (r *dbReader) sessions(ctx context.Context) ([]*source, error) {
	have, err := r.columns(ctx, "session")
	if err != nil {
		return nil, err
	}
	if !have["id"] {
		return nil, fmt.Errorf("%s: %s: session table has no id column", r.tool, r.path)
	}
	order := importer.SQLiteOrder(have, "time_created", "id")
	rows, err := r.db.QueryContext(ctx, "SELECT "+importer.SQLiteSelect(have, sessionColumns)+" FROM session ORDER BY "+order)
	if err != nil {
		return nil, r.error(err)
	}
	defer rows.Close()
	var all []*source
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, len(sessionColumns))
		if err != nil {
			return nil, r.error(err)
		}
		src := &source{ID: asString(v[0]), File: r.path}
		if src.ID == "" {
			r.res.Problemf(r.path, 0, "session without an id")
			continue
		}
		src.Info.ParentID = asString(v[1])
		src.Info.Title = asString(v[2])
		src.Info.Directory = asString(v[3])
		src.Info.Version = asString(v[4])
		src.Info.Time.Created = asFloat(v[5])
		src.Info.Time.Updated = asFloat(v[6])
		if m := asString(v[7]); m != "" {
			// What a handed-off session records of the loom session it
			// continues; metadata of any other shape is none.
			_ = json.Unmarshal([]byte(m), &src.Info.Metadata)
		}
		all = append(all, src)
	}
	if err := rows.Err(); err != nil {
		return nil, r.error(err)
	}
	return parentsFirst(all), nil
}

// parentsFirst orders sessions so that each comes after its parent when
// its parent is among them, keeping their order otherwise. A cycle of
// parents (which opencode never makes) keeps its sessions, after the
// others.
func parentsFirst(all []*source) []*source {
	byID := make(map[string]bool, len(all))
	for _, s := range all {
		byID[s.ID] = true
	}
	children := map[string][]*source{}
	var out []*source
	for _, s := range all {
		if p := s.Info.ParentID; p != "" && p != s.ID && byID[p] {
			children[p] = append(children[p], s)
		} else {
			out = append(out, s)
		}
	}
	placed := make(map[string]bool, len(all))
	for _, s := range out {
		placed[s.ID] = true
	}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i].ID] {
			if !placed[c.ID] {
				placed[c.ID] = true
				out = append(out, c)
			}
		}
	}
	for _, s := range all {
		if !placed[s.ID] {
			placed[s.ID] = true
			out = append(out, s)
		}
	}
	return out
}

// columns lists the columns of a table.
func (r *dbReader) columns(ctx context.Context, table string) (map[string]bool, error) {
	have, err := importer.SQLiteColumns(ctx, r.db, table)
	if err != nil {
		return nil, r.error(err)
	}
	return have, nil
}

// record is one row's id and data column, the data left out when it is
// larger than maxRecord.
type record struct {
	id, owner string
	created   float64
	data      []byte
	size      int64
}

// messages reads src's messages and their parts.
func (r *dbReader) messages(ctx context.Context, src *source) error {
	index := map[string]int{}
	err := r.records(ctx, `SELECT id, '', time_created, CASE WHEN octet_length(data) > ? THEN NULL ELSE data END, octet_length(data)
		FROM message WHERE session_id = ? ORDER BY time_created, id`, src.ID, func(rec record) {
		if _, dup := index[rec.id]; dup || !r.decode("message", rec) {
			return
		}
		m := sourceMessage{ID: rec.id, File: r.path}
		if line, reason := decode(rec.data, &m.Info); reason != "" {
			r.res.Problemf(r.path, 0, "message "+rec.id+": "+reason+lineNote(line))
			return
		}
		r.checkUTF8("message", rec)
		if m.Info.Time.Created == 0 {
			m.Info.Time.Created = rec.created
		}
		index[rec.id] = len(src.Messages)
		src.Messages = append(src.Messages, m)
	})
	if err != nil {
		return err
	}
	return r.records(ctx, `SELECT id, message_id, 0, CASE WHEN octet_length(data) > ? THEN NULL ELSE data END, octet_length(data)
		FROM part WHERE session_id = ? ORDER BY message_id, id`, src.ID, func(rec record) {
		i, ok := index[rec.owner]
		if !ok {
			r.res.Skip("orphan-part")
			return
		}
		if !r.decode("part", rec) {
			return
		}
		p := sourcePart{ID: rec.id, File: r.path}
		if line, reason := decode(rec.data, &p.Info); reason != "" {
			r.res.Problemf(r.path, 0, "part "+rec.id+": "+reason+lineNote(line))
			return
		}
		r.checkUTF8("part", rec)
		src.Messages[i].Parts = append(src.Messages[i].Parts, p)
	})
}

// checkUTF8 makes a record whose data decoded but holds bytes that are
// not UTF-8 (kept as U+FFFD) one problem, naming it.
func (r *dbReader) checkUTF8(kind string, rec record) {
	if !utf8.Valid(rec.data) {
		r.res.Problemf(r.path, 0, kind+" "+rec.id+": "+importer.NotUTF8)
	}
}

// decode reports a record whose data is missing or too large.
func (r *dbReader) decode(kind string, rec record) bool {
	switch {
	case rec.size > maxRecord:
		r.res.Problemf(r.path, 0, kind+" "+rec.id+": data larger than "+size(maxRecord))
		return false
	case rec.data == nil:
		r.res.Problemf(r.path, 0, kind+" "+rec.id+": no data")
		return false
	}
	return true
}

// records runs query with (maxRecord, session) and calls fn with each
// row, streaming.
func (r *dbReader) records(ctx context.Context, query, session string, fn func(record)) error {
	rows, err := r.db.QueryContext(ctx, query, maxRecord, session)
	if err != nil {
		return r.error(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, owner, created, data, size any
		if err := rows.Scan(&id, &owner, &created, &data, &size); err != nil {
			return r.error(err)
		}
		rec := record{id: asString(id), owner: asString(owner), created: asFloat(created), size: int64(asFloat(size))}
		switch d := data.(type) {
		case string:
			rec.data = []byte(d)
		case []byte:
			rec.data = d
		}
		if rec.id == "" {
			r.res.Problemf(r.path, 0, "record without an id in session "+session)
			continue
		}
		fn(rec)
	}
	if err := rows.Err(); err != nil {
		return r.error(err)
	}
	return nil
}

// lineNote says on which line of a data column a JSON error is, when
// the column has several.
func lineNote(line int) string {
	if line > 1 {
		return " (line " + strconv.Itoa(line) + " of its data)"
	}
	return ""
}

var (
	asString = importer.SQLiteString
	asFloat  = importer.SQLiteFloat
)
