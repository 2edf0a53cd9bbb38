package opencode

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom/importer"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
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
func readDB(ctx context.Context, path string, wal bool) (*importer.Result, error) {
	db, err := openDB(ctx, path, wal)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r := &dbReader{db: db, path: path, res: &importer.Result{}}
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

// busyTimeout is how long a read waits for a writer's lock before the
// database is reported as being written. Tests lower it.
var busyTimeout = 3 * time.Second

// openDB opens path read-only and checks that it is opencode's; wal is
// whether its header says it is in WAL mode.
//
// It never reads what a writer has not committed. It is opened without
// immutable, so that SQLite takes its shared lock and looks for a hot
// journal: while a writer of a rollback-journal database (journal_mode
// DELETE, TRUNCATE or PERSIST) writes its pages into the file, the read
// waits busyTimeout for it and then fails as busy; a journal left hot by
// a writer that died mid-transaction, which a read-only reader may not
// roll back, fails the read too, until opencode rolls it back. Either is
// an error naming the file, so that the file is read again next time.
//
// The one exception is a database in WAL mode with neither a -wal nor a
// -journal file: no connection has it open (WAL connections keep the
// -wal file while open) and its file holds committed pages only (WAL
// mode writes transactions to the -wal file, never to the database
// file), so it is read with immutable=1, which creates no -wal or -shm
// file beside it as a read-only WAL reader would. When the WAL cannot be
// read (a -wal without its -shm, in a directory this process may not
// write), the main file, committed pages only, is read alone too.
func openDB(ctx context.Context, path string, wal bool) (*sql.DB, error) {
	params := "_pragma=busy_timeout(" + strconv.FormatInt(busyTimeout.Milliseconds(), 10) + ")&_pragma=query_only(1)&mode=ro"
	beside := func(suffix string) bool {
		_, err := os.Stat(path + suffix)
		return err == nil
	}
	hasWAL, hasJournal := beside("-wal"), beside("-journal")
	// noFiles: a WAL database with neither file beside it, which no
	// connection has open: its file holds committed pages only.
	// walOnly: a WAL database with its -wal and no journal, whose main
	// file is read alone when the WAL cannot be.
	noFiles := wal && !hasWAL && !hasJournal
	walOnly := wal && hasWAL && !hasJournal
	db, err := tryOpen(ctx, path, params, noFiles)
	if err != nil && walOnly && !isBusy(err) && ctx.Err() == nil {
		db, err = tryOpen(ctx, path, params, true)
	}
	if err != nil {
		return nil, dbError(path, err)
	}
	return db, nil
}

func tryOpen(ctx context.Context, path, params string, immutable bool) (*sql.DB, error) {
	if immutable {
		params += "&immutable=1"
	}
	db, err := sql.Open(driverName, "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+params)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	var n int
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('session', 'message', 'part')`).Scan(&n)
	if err == nil && n != 3 {
		err = errors.New("not an opencode database: no session, message and part tables")
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// isBusy reports whether err is SQLite's: the database is locked by a
// writer.
func isBusy(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	c := e.Code() & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// dbError names the file in err and, when the database could not be read
// because of a writer, says so and what to do.
func dbError(path string, err error) error {
	var e *sqlite.Error
	switch {
	case isBusy(err):
		return fmt.Errorf("opencode: %s: %s is being written; try again (%w)", path, filepath.Base(path), err)
	case errors.As(err, &e) && e.Code() == sqlite3.SQLITE_READONLY_ROLLBACK:
		return fmt.Errorf("opencode: %s: %s holds a write that was cut off (a hot journal), which a read-only reader may not roll back; opencode rolls it back when it next opens the database; try again then (%w)", path, filepath.Base(path), err)
	}
	return fmt.Errorf("opencode: %s: %w", path, err)
}

type dbReader struct {
	db   *sql.DB
	path string
	res  *importer.Result
}

// sessionColumns are the session table's columns the reader uses, in
// the order sessions scans them. Columns opencode added or dropped over
// versions are read as NULL when the table has none.
var sessionColumns = []string{"id", "parent_id", "title", "directory", "version", "time_created", "time_updated"}

// sessions reads every session's row, ordered so that a session comes
// after the one that ran it.
func (r *dbReader) sessions(ctx context.Context) ([]*source, error) {
	have, err := r.columns(ctx, "session")
	if err != nil {
		return nil, err
	}
	if !have["id"] {
		return nil, fmt.Errorf("opencode: %s: session table has no id column", r.path)
	}
	exprs := make([]string, len(sessionColumns))
	for i, c := range sessionColumns {
		exprs[i] = "NULL"
		if have[c] {
			exprs[i] = `"` + c + `"`
		}
	}
	order := "id"
	if have["time_created"] {
		order = "time_created, id"
	}
	rows, err := r.db.QueryContext(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM session ORDER BY "+order)
	if err != nil {
		return nil, dbError(r.path, err)
	}
	defer rows.Close()
	var all []*source
	for rows.Next() {
		v := make([]any, len(sessionColumns))
		ptrs := make([]any, len(v))
		for i := range v {
			ptrs[i] = &v[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, dbError(r.path, err)
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
		all = append(all, src)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(r.path, err)
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
	rows, err := r.db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, dbError(r.path, err)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, dbError(r.path, err)
		}
		have[name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(r.path, err)
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
		src.Messages[i].Parts = append(src.Messages[i].Parts, p)
	})
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
		return dbError(r.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, owner, created, data, size any
		if err := rows.Scan(&id, &owner, &created, &data, &size); err != nil {
			return dbError(r.path, err)
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
		return dbError(r.path, err)
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

// asString reads a column SQLite may hold as text, blob or number.
func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// asFloat reads a numeric column, 0 for anything else.
func asFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	case []byte:
		f, _ := strconv.ParseFloat(string(x), 64)
		return f
	}
	return 0
}
