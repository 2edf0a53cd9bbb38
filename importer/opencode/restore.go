package opencode

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

var (
	_ importer.Holder = Format{}
	_ importer.Seeder = Format{}
)

// Holds names the database under root that holds session id, "" when
// none does: the program keeps every session in one database, whose
// name names none of them.
func (f Format) Holds(ctx context.Context, root, id string) (string, error) {
	bundles, err := f.Bundles(ctx, root)
	if err != nil {
		return "", err
	}
	for _, b := range bundles {
		name, isDB, wal, err := importer.SQLiteFile(f.Tool(), b)
		if err != nil {
			return "", err
		}
		if !isDB {
			// A session file of the tree the program wrote before its
			// database is named by its id.
			if filepath.Base(name) == id+".json" {
				return name, nil
			}
			continue
		}
		db, err := openDB(ctx, f.Tool(), name, wal)
		if err != nil {
			return "", err
		}
		var one int
		err = db.QueryRowContext(ctx, "SELECT 1 FROM session WHERE id = ?", id).Scan(&one)
		db.Close()
		switch {
		case err == nil:
			return name, nil
		case !errors.Is(err, sql.ErrNoRows):
			return "", importer.SQLiteError(f.Tool(), name, err)
		}
	}
	return "", nil
}

// Seed makes, in the data directory to (of a trial writing), an empty
// database of the schema of the program's own in the data directory
// from: its tables and indexes, no rows. A handoff writes only into a
// database the program made, of its version's schema.
func (f Format) Seed(ctx context.Context, from, to string) error {
	a := f.a()
	src := filepath.Join(from, a.db)
	if fi, err := os.Stat(src); err != nil || !fi.Mode().IsRegular() {
		return loom.Errorf(loom.EINVALID, "%s: no %s to write to (%s makes it when it first runs: run %s once)", a.tool, src, a.tool, a.tool)
	}
	name, _, wal, err := importer.SQLiteFile(a.tool, importer.Bundle{Files: []string{src}})
	if err != nil {
		return err
	}
	in, err := openDB(ctx, a.tool, name, wal)
	if err != nil {
		return err
	}
	defer in.Close()
	rows, err := in.QueryContext(ctx, "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type = 'table' DESC, rowid")
	if err != nil {
		return importer.SQLiteError(a.tool, src, err)
	}
	defer rows.Close()
	var schema []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return importer.SQLiteError(a.tool, src, err)
		}
		schema = append(schema, s)
	}
	if err := rows.Err(); err != nil {
		return importer.SQLiteError(a.tool, src, err)
	}
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	dst := filepath.Join(to, a.db)
	out, err := sql.Open(driverName, "file:"+(&url.URL{Path: dst}).EscapedPath())
	if err != nil {
		return fmt.Errorf("%s: %w", a.tool, err)
	}
	defer out.Close()
	for _, s := range schema {
		if _, err := out.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: copying the schema of %s: %w", a.tool, src, err)
		}
	}
	return out.Close()
}
