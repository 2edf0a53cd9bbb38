package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// ImportedFiles implements loom.Store.
func (s *Store) ImportedFiles(ctx context.Context, userID, tool string) ([]loom.ImportedFile, error) {
	out, err := rowscan.All(ctx, rowsOf{reads{s}}, rowscan.ImportedFile,
		`SELECT `+rowscan.ImportedFileColumns+` FROM import_files WHERE user_id = ? AND (? = '' OR tool = ?) ORDER BY path`,
		userID, tool, tool)
	if err != nil {
		return nil, fmt.Errorf("read import records: %w", err)
	}
	return out, nil
}

// recordFiles is what RecordImportedFiles does, inside tx.
func (s *Store) recordFiles(ctx context.Context, tx *sql.Tx, files []loom.ImportedFile) error {
	if len(files) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO import_files
		(user_id, path, tool, bundle, size, mtime_ns, source_id, session_id, imported_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("record imported files: %w", err)
	}
	defer st.Close()
	now := s.now()
	for _, f := range files {
		if _, err := st.ExecContext(ctx, f.UserID, f.Path, f.Tool, f.Bundle, f.Size, f.ModTime.UnixNano(),
			f.SourceID, f.SessionID, now); err != nil {
			return fmt.Errorf("record imported file %s: %w", f.Path, err)
		}
	}
	return nil
}

// RecordCalls implements sessionstore.ImportSteps.
func (w writes) RecordCalls(ctx context.Context, calls []loom.CountedCall) error {
	if len(calls) == 0 {
		return nil
	}
	st, err := w.tx.PrepareContext(ctx, `INSERT OR IGNORE INTO usage_calls (user_id, call, session_id) VALUES (?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("record counted calls: %w", err)
	}
	defer st.Close()
	for _, c := range calls {
		if _, err := st.ExecContext(ctx, c.UserID, c.Call, c.SessionID); err != nil {
			return fmt.Errorf("record counted call: %w", err)
		}
	}
	return nil
}

// CountingSessions implements loom.CallCounter.
func (s *Store) CountingSessions(ctx context.Context, userID string, calls []string) (map[string]string, error) {
	out := map[string]string{}
	for chunk := range slices.Chunk(calls, 500) {
		args := []any{userID}
		for _, c := range chunk {
			args = append(args, c)
		}
		rows, err := s.reader.QueryContext(ctx, `SELECT call, session_id FROM usage_calls WHERE user_id = ? AND call IN (?`+
			strings.Repeat(", ?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read counted calls: %w", err)
		}
		for rows.Next() {
			var call, id string
			if err := rows.Scan(&call, &id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read counted calls: %w", err)
			}
			out[call] = id
		}
		if err := rows.Close(); err != nil {
			return nil, fmt.Errorf("read counted calls: %w", err)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read counted calls: %w", err)
		}
	}
	return out, nil
}
