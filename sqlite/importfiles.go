package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/loomhq/loom/sessionstore"

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
	return s.withTx(ctx, func(tx *sql.Tx) error { return s.recordFiles(ctx, tx, files) })
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

// ApplyImport implements loom.ImportApplier: the new sessions, the
// changes and the file records in one transaction.
func (s *Store) ApplyImport(ctx context.Context, w *loom.ImportWrite) error {
	if err := w.Validate(); err != nil {
		return err
	}
	if w.Empty() {
		return nil
	}
	var fresh []*loom.Session
	err := s.withWrite(ctx, func(tx writes, log sessionstore.SyncLog) (err error) {
		if len(w.Sessions) > 0 {
			if err := sessionstore.Import(ctx, tx, log, w.Sessions); err != nil {
				return err
			}
		}
		fresh, err = sessionstore.ApplyChanges(ctx, tx, log, w.Changes, s.holder.Owner, s.Now())
		if err != nil {
			return err
		}
		return s.recordFiles(ctx, tx.tx, w.Files)
	})
	if err != nil {
		return err
	}
	sessionstore.Refresh(w.Changes, fresh)
	return nil
}
