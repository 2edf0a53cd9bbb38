package importer

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

// What the readers of agents that keep their sessions in a SQLite
// database (opencode, goose) share: opening the database read-only
// without blocking its program or reading what it has not committed,
// and naming the errors.

// sqliteHeader starts every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// The SQLite database header holds the file format's write and read
// versions, one byte each at these offsets: both are walFormat in WAL
// mode, 1 with a rollback journal.
const (
	writeVersionAt = 18
	readVersionAt  = 19
	walFormat      = 2
)

// SQLiteBusyTimeout is how long a read waits for a writer's lock before
// the database is reported as being written. Tests lower it.
var SQLiteBusyTimeout = 3 * time.Second

// SQLiteHeader reports whether name starts with SQLite's header and, if
// so, whether the header says the database is in WAL mode.
func SQLiteHeader(name string) (isDB, wal bool, err error) {
	f, _, err := Open(name, 0)
	if err != nil {
		return false, false, err
	}
	defer f.Close()
	head := make([]byte, readVersionAt+1)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, false, err
	}
	if n < len(sqliteHeader) || !bytes.Equal(head[:len(sqliteHeader)], sqliteHeader) {
		return false, false, nil
	}
	return true, n == len(head) && head[writeVersionAt] == walFormat && head[readVersionAt] == walFormat, nil
}

// SQLiteBundle is the bundle of a database file: the file, with its
// write-ahead log when there is one (so that a change still in the log
// is noticed).
func SQLiteBundle(db string) Bundle {
	b := Bundle{Files: []string{db}}
	if fi, err := os.Stat(db + "-wal"); err == nil && fi.Mode().IsRegular() {
		b.Files = append(b.Files, db+"-wal")
	}
	return b
}

// OpenSQLite opens the database at path read-only for tool's reader; wal
// is whether its header says it is in WAL mode, and check tells whether
// it is the tool's (an error when not). It allows one connection.
//
// It never reads what a writer has not committed. It is opened without
// immutable, so that SQLite takes its shared lock and looks for a hot
// journal: while a writer of a rollback-journal database (journal_mode
// DELETE, TRUNCATE or PERSIST) writes its pages into the file, the read
// waits SQLiteBusyTimeout for it and then fails as busy; a journal left
// hot by a writer that died mid-transaction, which a read-only reader
// may not roll back, fails the read too, until the tool rolls it back.
// Either is an error naming the file, so that the file is read again
// next time. query_only makes sure nothing is ever written; in WAL mode
// a reader neither blocks the tool's writes nor checkpoints.
//
// The one exception is a database in WAL mode with neither a -wal nor a
// -journal file: no connection has it open (WAL connections keep the
// -wal file while open) and its file holds committed pages only (WAL
// mode writes transactions to the -wal file, never to the database
// file), so it is read with immutable=1, which creates no -wal or -shm
// file beside it as a read-only WAL reader would. When the WAL cannot be
// read (a -wal without its -shm, in a directory this process may not
// write), the main file, committed pages only, is read alone too.
func OpenSQLite(ctx context.Context, tool, path string, wal bool, check func(context.Context, *sql.DB) error) (*sql.DB, error) {
	params := "_pragma=busy_timeout(" + strconv.FormatInt(SQLiteBusyTimeout.Milliseconds(), 10) + ")&_pragma=query_only(1)&mode=ro"
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
	db, err := trySQLite(ctx, path, params, noFiles, check)
	if err != nil && walOnly && !SQLiteBusy(err) && ctx.Err() == nil {
		db, err = trySQLite(ctx, path, params, true, check)
	}
	if err != nil {
		return nil, SQLiteError(tool, path, err)
	}
	return db, nil
}

func trySQLite(ctx context.Context, path, params string, immutable bool, check func(context.Context, *sql.DB) error) (*sql.DB, error) {
	if immutable {
		params += "&immutable=1"
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+params)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := check(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// SQLiteTables counts how many of tables db has: a check for OpenSQLite.
func SQLiteTables(ctx context.Context, db *sql.DB, tables ...string) (int, error) {
	var n int
	for _, t := range tables {
		var one int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, t).Scan(&one); err != nil {
			return 0, err
		}
		n += one
	}
	return n, nil
}

// SQLiteBusy reports whether err is SQLite's: the database is locked by
// a writer.
func SQLiteBusy(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	c := e.Code() & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// SQLiteError names tool and the file in err and, when the database
// could not be read because of a writer, says so and what to do.
func SQLiteError(tool, path string, err error) error {
	var e *sqlite.Error
	switch {
	case SQLiteBusy(err):
		return fmt.Errorf("%s: %s: %s is being written; try again (%w)", tool, path, filepath.Base(path), err)
	case errors.As(err, &e) && e.Code() == sqlite3.SQLITE_READONLY_ROLLBACK:
		return fmt.Errorf("%s: %s: %s holds a write that was cut off (a hot journal), which a read-only reader may not roll back; %s rolls it back when it next opens the database; try again then (%w)", tool, path, filepath.Base(path), tool, err)
	}
	return fmt.Errorf("%s: %s: %w", tool, path, err)
}

// SQLiteColumns lists the columns of a table.
func SQLiteColumns(ctx context.Context, db *sql.DB, table string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		have[name] = true
	}
	return have, rows.Err()
}

// SQLiteString reads a column SQLite may hold as text, blob or number.
func SQLiteString(v any) string {
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

// SQLiteFloat reads a numeric column, 0 for anything else.
func SQLiteFloat(v any) float64 {
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

// RegularFile checks that name is a regular file: opening a named pipe
// would wait for a writer forever.
func RegularFile(name string) error {
	fi, err := os.Stat(name)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", name)
	}
	return nil
}

// SQLiteFile checks the main file of a bundle a reader of tool was
// given: that there is one and it is a regular file, and whether it is
// a SQLite database (and in WAL mode).
func SQLiteFile(tool string, b Bundle) (name string, isDB, wal bool, err error) {
	name = b.Name()
	if name == "" {
		return "", false, false, fmt.Errorf("%s: empty bundle", tool)
	}
	if err := RegularFile(name); err != nil {
		return "", false, false, fmt.Errorf("%s: %w", tool, err)
	}
	isDB, wal, err = SQLiteHeader(name)
	if err != nil {
		return "", false, false, fmt.Errorf("%s: %w", tool, err)
	}
	return name, isDB, wal, nil
}

// SQLiteSelect is the select list of cols for a table with the columns
// have: a column the table lacks (a version before it) is NULL.
func SQLiteSelect(have map[string]bool, cols []string) string {
	exprs := make([]string, len(cols))
	for i, c := range cols {
		exprs[i] = "NULL"
		if have[c] {
			exprs[i] = `"` + c + `"`
		}
	}
	return strings.Join(exprs, ", ")
}

// SQLiteOrder is the ORDER BY of rows read in the order a tool wrote
// them: by the column by, then key, when the table has by (have); by key
// alone, in an older version that lacks it.
func SQLiteOrder(have map[string]bool, by, key string) string {
	if have[by] {
		return by + ", " + key
	}
	return key
}

// OpenSQLiteTables is OpenSQLite for a tool whose database is known by
// its tables: one without all of them is not the tool's (an error
// saying so, "not a <name> database").
func OpenSQLiteTables(ctx context.Context, tool, name, path string, wal bool, tables ...string) (*sql.DB, error) {
	return OpenSQLite(ctx, tool, path, wal, func(ctx context.Context, db *sql.DB) error {
		n, err := SQLiteTables(ctx, db, tables...)
		if err == nil && n != len(tables) {
			err = fmt.Errorf("not a %s database: no %s tables", name, strings.Join(tables, " and "))
		}
		return err
	})
}

// SQLiteRow scans the current row of rows, of n columns, as values.
func SQLiteRow(rows *sql.Rows, n int) ([]any, error) {
	v := make([]any, n)
	ptrs := make([]any, n)
	for i := range v {
		ptrs[i] = &v[i]
	}
	return v, rows.Scan(ptrs...)
}

// UnixTime is a time a tool recorded as a number since the epoch:
// seconds, or milliseconds when too large for seconds; the zero time for
// none or nonsense.
func UnixTime(v float64) time.Time {
	switch {
	case !(v > 0 && v < 1e15):
		return time.Time{}
	case v >= 1e11:
		return time.UnixMilli(int64(v)).UTC()
	}
	return time.Unix(int64(v), 0).UTC()
}

// DBBundles is the bundle of a tool that keeps one database, named
// file, in a directory: root itself when it is a file, else root's
// file when there is one.
func DBBundles(tool, root, file string) ([]Bundle, error) {
	fi, err := StatRoot(tool, root)
	if fi == nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []Bundle{SQLiteBundle(root)}, nil
	}
	db := filepath.Join(root, file)
	if RegularFile(db) == nil {
		return []Bundle{SQLiteBundle(db)}, nil
	}
	var u Unreadable
	if u.DirInPlace(db) {
		return nil, &u
	}
	return nil, nil
}

// OpenDBBundle opens the database of bundle b of tool (whose display
// name is name), which must hold tables: its path and the database.
func OpenDBBundle(ctx context.Context, tool, name string, b Bundle, tables ...string) (string, *sql.DB, error) {
	path, isDB, wal, err := SQLiteFile(tool, b)
	if err != nil {
		return "", nil, err
	}
	if !isDB {
		return "", nil, fmt.Errorf("%s: %s is not a SQLite database", tool, path)
	}
	db, err := OpenSQLiteTables(ctx, tool, name, path, wal, tables...)
	return path, db, err
}
