package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// ImportedFiles implements loom.Store.
func (s *Store) ImportedFiles(ctx context.Context, userID, tool string) ([]loom.ImportedFile, error) {
	if !storable(userID, tool) {
		return nil, nil
	}
	out, err := rowscan.All(ctx, rowsOf{s.pool}, rowscan.ImportedFile,
		`SELECT `+rowscan.ImportedFileColumns+` FROM import_files WHERE user_id = $1 AND ($2 = '' OR tool = $2) ORDER BY path`,
		userID, tool)
	if err != nil {
		return nil, fmt.Errorf("read import records: %w", err)
	}
	return out, nil
}

// recordFiles is what RecordImportedFiles does, inside tx.
func (s *Store) recordFiles(ctx context.Context, tx pgx.Tx, files []loom.ImportedFile) error {
	if len(files) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	now := ms(s.Now())
	for _, f := range files {
		b.Queue(`INSERT INTO import_files (user_id, path, tool, bundle, size, mtime_ns, source_id, session_id, imported_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (user_id, path) DO UPDATE SET tool = excluded.tool, bundle = excluded.bundle,
				size = excluded.size, mtime_ns = excluded.mtime_ns, source_id = excluded.source_id,
				session_id = excluded.session_id, imported_at = excluded.imported_at`,
			f.UserID, f.Path, f.Tool, f.Bundle, f.Size, f.ModTime.UnixNano(), f.SourceID, f.SessionID, now)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("record imported files: %w", err)
	}
	return nil
}

// RecordCalls implements sessionstore.ImportSteps.
func (w *writeTx) RecordCalls(ctx context.Context, calls []loom.CountedCall) error {
	if len(calls) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, c := range calls {
		if !storable(c.UserID, c.Call, c.SessionID) {
			return loom.Errorf(loom.EINVALID, "a counted call must be UTF-8 text without NUL bytes")
		}
		b.Queue(`INSERT INTO usage_calls (user_id, call, session_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, c.UserID, c.Call, c.SessionID)
	}
	if err := w.tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("record counted calls: %w", err)
	}
	return nil
}

// CountingSessions implements loom.CallCounter.
func (s *Store) CountingSessions(ctx context.Context, userID string, calls []string) (map[string]string, error) {
	out := map[string]string{}
	var ok []string
	for _, c := range calls {
		if storable(c) {
			ok = append(ok, c)
		}
	}
	if !storable(userID) || len(ok) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT call, session_id FROM usage_calls WHERE user_id = $1 AND call = ANY($2)`, userID, ok)
	if err != nil {
		return nil, fmt.Errorf("read counted calls: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var call, id string
		if err := rows.Scan(&call, &id); err != nil {
			return nil, fmt.Errorf("read counted calls: %w", err)
		}
		out[call] = id
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read counted calls: %w", err)
	}
	return out, nil
}
