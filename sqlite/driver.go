package sqlite

// The driver sits behind this one file so that another can be swapped in:
// its name, and how its errors say what went wrong.
import (
	"database/sql/driver"
	"errors"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// driverName is the driver a store opens its file with. The plan test
// (plan_test.go) sets it, while it runs, to a driver that wraps this
// one and records each statement run.
var driverName = "sqlite"

func init() {
	// wordsIn, as a function of every connection: the text of a NULL
	// is "", where LIKE finds none of the (never empty) words either.
	sqlite.MustRegisterDeterministicScalarFunction(wordsInName, 3, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		var text [3]string
		for i, a := range args {
			switch v := a.(type) {
			case string:
				text[i] = v
			case []byte:
				text[i] = string(v)
			}
		}
		return int64(wordsIn(text[0], text[1], text[2])), nil
	})
}

// errorCode returns the extended result code of a SQLite error, 0 for any
// other error.
func errorCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

// isUnique reports whether err is a broken uniqueness constraint: a key
// or an id another row already has.
func isUnique(err error) bool {
	switch errorCode(err) {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return true
	}
	return false
}

// isSQLError reports whether err is SQLite refusing a statement's text
// (SQLITE_ERROR): for a search, a raw FTS5 query it cannot parse.
func isSQLError(err error) bool {
	return errorCode(err)&0xff == sqlite3.SQLITE_ERROR
}

// isBusy reports whether err is SQLite finding the database locked by
// another connection (SQLITE_BUSY, of any kind) after its busy timeout,
// or at once where waiting could deadlock.
func isBusy(err error) bool {
	return errorCode(err)&0xff == sqlite3.SQLITE_BUSY
}

// isFull reports whether err is SQLite finding no room to write, or the
// system's ENOSPC itself. SQLite answers SQLITE_FULL where a write of a
// page meets ENOSPC (or the file is at max_page_count), and
// SQLITE_IOERR_SHMSIZE where it cannot enlarge the WAL's shared-memory
// file, which opening a store on a full disk needs.
func isFull(err error) bool {
	code := errorCode(err)
	return code&0xff == sqlite3.SQLITE_FULL || code == sqlite3.SQLITE_IOERR_SHMSIZE || errors.Is(err, syscall.ENOSPC)
}

// Damage reports what err says of the store's file: damaged
// (SQLITE_CORRUPT: a page does not read as SQLite wrote it), not a
// database (SQLITE_NOTADB: the file does not start as one), or neither.
func Damage(err error) (damaged, notADB bool) {
	switch errorCode(err) & 0xff {
	case sqlite3.SQLITE_CORRUPT:
		return true, false
	case sqlite3.SQLITE_NOTADB:
		return false, true
	}
	return false, false
}
