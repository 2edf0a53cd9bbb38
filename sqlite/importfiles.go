package sqlite

import (
	"context"
	"database/sql"
	"fmt"

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

// RecordImportedFiles implements loom.Store.
func (s *Store) RecordImportedFiles(ctx context.Context, files []loom.ImportedFile) error {
	for i := range files {
		if err := files[i].Validate(); err != nil {
			return err
		}
	}
	return s.withTx(ctx, func(tx *sql.Tx) error {
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
	})
}
