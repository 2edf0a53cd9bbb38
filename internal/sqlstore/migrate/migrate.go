// Package migrate runs an engine's schema migrations: numbered files
// NNNN_name.sql applied in order, all of those a database lacks in one
// transaction. The runner is the same for every engine; each engine
// supplies its SQL, where it records the version, and its transaction
// (with whatever it must check or lock first).
package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one numbered schema change.
type Migration struct {
	// Version is the file's number: migrations run 1, 2, 3 … in order.
	Version int
	// Name is the file's path, for errors.
	Name string
	SQL  string
}

// Load reads the migrations *.sql in dir of fsys, in order, and checks
// that their numbers run 1, 2, 3 … without gaps.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	out := make([]Migration, len(names))
	for i, name := range names {
		n, err := strconv.Atoi(strings.SplitN(path.Base(name), "_", 2)[0])
		if err != nil || n != i+1 {
			return nil, fmt.Errorf("migration %s is out of sequence", name)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration: %w", err)
		}
		out[i] = Migration{Version: n, Name: name, SQL: string(body)}
	}
	return out, nil
}

// Engine is what the runner needs of an engine's database.
type Engine interface {
	// Version reads the version the database is at (0 for a new one),
	// cheaply and outside any transaction: the check every open makes.
	Version(ctx context.Context) (int, error)
	// InTx runs fn in the transaction that migrates the database to
	// latest, committing when fn succeeds.
	InTx(ctx context.Context, latest int, fn func(Tx) error) error
}

// Tx is an engine's migration transaction.
type Tx interface {
	// Version reads the version again inside the transaction: another
	// process may have migrated meanwhile.
	Version(ctx context.Context) (int, error)
	// Apply runs m and records that the database is at m.Version.
	Apply(ctx context.Context, m Migration) error
}

// Run brings the database e reaches up to date with ms. A database
// already up to date costs one Version read.
func Run(ctx context.Context, e Engine, ms []Migration) error {
	v, err := e.Version(ctx)
	if err != nil {
		return err
	}
	if v >= len(ms) {
		return nil
	}
	return e.InTx(ctx, len(ms), func(tx Tx) error {
		v, err := tx.Version(ctx)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		for _, m := range ms[min(v, len(ms)):] {
			if err := tx.Apply(ctx, m); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
		}
		return nil
	})
}
