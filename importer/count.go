package importer

import (
	"context"
)

// Counter is a Format one of whose bundles can hold several sessions (a
// database): `loom session import --from list` asks it how many, so
// that a database of six sessions counts six. A Format that is not a
// Counter holds one session per bundle.
type Counter interface {
	// CountSessions counts the sessions of b, reading no more of it than
	// that takes (one query of a database).
	CountSessions(ctx context.Context, b Bundle) (int, error)
}

// CountSessions counts the sessions of bundles of f: one a bundle,
// unless f is a Counter. A bundle that cannot be counted counts one, and
// the first error is returned beside the count.
func CountSessions(ctx context.Context, f Format, bundles []Bundle) (int, error) {
	c, ok := f.(Counter)
	if !ok {
		return len(bundles), nil
	}
	n := 0
	var first error
	for _, b := range bundles {
		k, err := c.CountSessions(ctx, b)
		if err != nil {
			if ctx.Err() != nil {
				return n, ctx.Err()
			}
			if first == nil {
				first = err
			}
			k = 1
		}
		n += k
	}
	return n, first
}

// CountSQLite is the CountSessions of a format that keeps its sessions in
// a SQLite database beside files of one session each: query (one
// count) over the database of b, which must have tables; a bundle that
// is not a database holds one session.
func CountSQLite(ctx context.Context, tool string, b Bundle, query string, tables ...string) (int, error) {
	name, isDB, wal, err := SQLiteFile(tool, b)
	if err != nil {
		return 0, err
	}
	if !isDB {
		return 1, nil
	}
	db, err := OpenSQLiteTables(ctx, tool, tool, name, wal, tables...)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, query).Scan(&n); err != nil {
		return 0, SQLiteError(tool, name, err)
	}
	return n, nil
}
