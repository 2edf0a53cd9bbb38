package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/migrate"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrate runs the embedded migrations newer than PRAGMA user_version, all
// in one transaction. A store already up to date costs one read.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return migrate.Run(ctx, migrator{s}, ms)
}

// migrations are the embedded migrations, read once per process: every
// open needs their number, and they never change.
var migrations = sync.OnceValues(func() ([]migrate.Migration, error) {
	return migrate.Load(migrationFS, "migrations")
})

// addColumn matches a migration's line that adds a column: the table
// and the column.
var addColumn = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^ALTER TABLE (\w+) ADD COLUMN (\w+) [^;\n]*;$`)
})

// migrator is the SQLite side of the migration runner: the version is
// PRAGMA user_version, and the transaction is an immediate one on the
// writer of a file in WAL mode.
type migrator struct{ s *Store }

// Version implements migrate.Engine.
func (m migrator) Version(ctx context.Context) (int, error) {
	var v int
	if err := m.s.reader.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return 0, m.s.full(fmt.Errorf("open %s: %w", m.s.path, err))
	}
	return v, nil
}

// InTx implements migrate.Engine.
func (m migrator) InTx(ctx context.Context, latest int, fn func(migrate.Tx) error) error {
	s := m.s
	if s.readOnly {
		return loom.Errorf(loom.EINVALID, "%s needs an upgrade to schema %d but is read-only; open it once with write access", s.path, latest)
	}
	var mode string
	if err := s.writer.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		return s.full(fmt.Errorf("open %s: %w", s.path, err))
	}
	if mode != "wal" {
		return fmt.Errorf("open %s: journal_mode is %q, want wal", s.path, mode)
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return s.full(fmt.Errorf("migrate: %w", err))
	}
	defer tx.Rollback()
	if err := fn(migrationTx{tx}); err != nil {
		return s.full(err)
	}
	if err := tx.Commit(); err != nil {
		return s.full(fmt.Errorf("migrate: %w", err))
	}
	return nil
}

type migrationTx struct{ tx *sql.Tx }

// Version implements migrate.Tx.
func (t migrationTx) Version(ctx context.Context) (int, error) {
	var v int
	err := t.tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v)
	return v, err
}

// Apply implements migrate.Tx. A migration may run again over a schema
// that has it (tests set a store's version back), so an ALTER TABLE …
// ADD COLUMN line of a column the table has is left out: SQLite has no
// ADD COLUMN IF NOT EXISTS.
func (t migrationTx) Apply(ctx context.Context, m migrate.Migration) error {
	body := m.SQL
	for _, a := range addColumn().FindAllStringSubmatch(body, -1) {
		var has bool
		if err := t.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pragma_table_info(?) WHERE name = ?)`, a[1], a[2]).Scan(&has); err != nil {
			return err
		}
		if has {
			body = strings.Replace(body, a[0], "", 1)
		}
	}
	if _, err := t.tx.ExecContext(ctx, body); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, m.Version))
	return err
}
