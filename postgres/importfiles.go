package postgres

import (
	"context"
	"fmt"

	"github.com/loomhq/loom/sessionstore"

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

// RecordImportedFiles implements loom.Store.
func (s *Store) RecordImportedFiles(ctx context.Context, files []loom.ImportedFile) error {
	if err := validFiles(files); err != nil {
		return err
	}
	return s.withTx(ctx, func(tx pgx.Tx) error { return s.recordFiles(ctx, tx, files) })
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

// validFiles checks records of imported files before they are stored.
func validFiles(files []loom.ImportedFile) error {
	for i := range files {
		f := &files[i]
		if err := f.Validate(); err != nil {
			return err
		}
		if !storable(f.UserID, f.Path, f.Tool, f.Bundle, f.SourceID, f.SessionID) {
			return loom.Errorf(loom.EINVALID, "imported file record must be UTF-8 text without NUL bytes")
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
	if err := validFiles(w.Files); err != nil {
		return err
	}
	if w.Empty() {
		return nil
	}
	var p *importRows
	if len(w.Sessions) > 0 {
		var err error
		if p, err = prepareImport(w.Sessions); err != nil {
			return err
		}
	}
	var fresh []*loom.Session
	now := ms(s.Now())
	err := s.withTx(ctx, func(tx pgx.Tx) (err error) {
		wt := &writeTx{s: s, tx: tx, prepared: p}
		if p != nil {
			if err := sessionstore.Import(ctx, wt, noLog, w.Sessions); err != nil {
				return err
			}
		}
		fresh, err = sessionstore.ApplyChanges(ctx, wt, noLog, w.Changes, s.holder.Owner, now)
		if err != nil {
			return err
		}
		return s.recordFiles(ctx, tx, w.Files)
	})
	if err != nil {
		return err
	}
	s.analyzeImported(ctx, len(w.Sessions))
	sessionstore.Refresh(w.Changes, fresh)
	return nil
}
