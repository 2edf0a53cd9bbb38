package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/migrate"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrateSchema runs the embedded migrations not yet recorded in
// schema_migrations, all in one transaction. A database already up to
// date costs one read.
func migrateSchema(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := migrate.Load(migrationFS, "migrations")
	if err != nil {
		return err
	}
	return migrate.Run(ctx, migrator{pool}, ms)
}

// migrator is the PostgreSQL side of the migration runner: versions are
// rows of schema_migrations, and the migrating transaction holds an
// advisory lock for the schema, so that servers starting at once on a
// new database migrate it once.
type migrator struct{ pool *pgxpool.Pool }

const schemaVersionSQL = `SELECT coalesce(max(version), 0) FROM schema_migrations`

// Version implements migrate.Engine.
func (m migrator) Version(ctx context.Context) (int, error) {
	var v int
	err := m.pool.QueryRow(ctx, schemaVersionSQL).Scan(&v)
	switch {
	case pgCode(err) == "42P01": // undefined_table: a new database
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// InTx implements migrate.Engine.
func (m migrator) InTx(ctx context.Context, _ int, fn func(migrate.Tx) error) error {
	return pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error {
		var schema *string
		if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if schema == nil {
			return loom.Errorf(loom.EINVALID, "no schema to create loom's tables in: the search_path names none that exists")
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('loom migrate ' || current_schema(), 0))`); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		return fn(migrationTx{tx})
	})
}

type migrationTx struct{ tx pgx.Tx }

// Version implements migrate.Tx.
func (t migrationTx) Version(ctx context.Context) (int, error) {
	var v int
	err := t.tx.QueryRow(ctx, schemaVersionSQL).Scan(&v)
	return v, err
}

// Apply implements migrate.Tx. Without arguments pgx sends the file as
// one simple query, which may hold many statements.
func (t migrationTx) Apply(ctx context.Context, m migrate.Migration) error {
	if _, err := t.tx.Exec(ctx, m.SQL); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, m.Version)
	return err
}
