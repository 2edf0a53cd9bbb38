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
