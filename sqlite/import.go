package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/loomhq/loom"
)

// Import implements loom.Store. Everything is validated before anything is
// written, and the whole import is one transaction. The search index is
// filled in one statement at the end instead of by the per-row trigger.
func (s *Store) Import(ctx context.Context, data []*loom.SessionData) error {
	if err := loom.ValidateImport(data); err != nil {
		return err
	}
	return s.withTx(ctx, func(tx *sql.Tx) error {
		for _, d := range data {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE id = ?`, d.Session.ID).Scan(&n); err != nil {
				return fmt.Errorf("import: %w", err)
			}
			if n > 0 {
				return loom.Errorf(loom.ECONFLICT, "session %s already exists", d.Session.ID)
			}
		}
		var firstBody int64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM bodies`).Scan(&firstBody); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO bulk_load (active) VALUES (1)`); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		insBody, err := tx.PrepareContext(ctx, insertBodySQL)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer insBody.Close()
		insMsg, err := tx.PrepareContext(ctx, insertMessageSQL)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer insMsg.Close()
		for _, d := range data {
			if err := s.importSession(ctx, tx, d, insBody, insMsg); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO bodies_fts (rowid, content) SELECT id, content FROM bodies WHERE id >= ?`, firstBody); err != nil {
			return fmt.Errorf("import: index: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM bulk_load`); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		return nil
	})
}

func (s *Store) importSession(ctx context.Context, tx *sql.Tx, d *loom.SessionData, insBody, insMsg *sql.Stmt) error {
	x := d.Session
	u := x.Usage
	tool, version, path := x.SourceColumns()
	_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, user_id, key, surface, title, description,
		kind, parent_id, fork_turn, project_id, project_name, project_root, cwd, model, provider,
		profile, message_count, turn_count, summary_seq, last_prompt,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
		cost_usd, api_calls, compactions, created_at, updated_at, deleted_at, archived_at,
		git_branch, source_tool, source_version, source_path)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		x.ID, x.UserID, nullString(x.Key), x.Surface, x.Title, x.Description, x.Kind,
		nullString(x.ParentID), x.ForkTurn, x.Project.ID, x.Project.Name, x.Project.Root, x.Cwd,
		x.Model, x.Provider, x.Profile, x.MessageCount, x.TurnCount, x.SummarySeq, x.LastPrompt,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens,
		u.CostUSD, u.APICalls, u.Compactions, loom.FormatTime(x.CreatedAt), loom.FormatTime(x.UpdatedAt),
		nullTime(x.DeletedAt), nullTime(x.ArchivedAt), x.GitBranch, tool, version, path)
	if isUnique(err) {
		return loom.Errorf(loom.ECONFLICT, "import %s: another session already has key %q", x.ID, x.Key)
	}
	if err != nil {
		return fmt.Errorf("import %s: %w", x.ID, err)
	}
	for _, m := range d.Messages {
		parts, err := loom.EncodeParts(m)
		if err != nil {
			return err
		}
		res, err := insBody.ExecContext(ctx, parts, m.SearchText())
		if err != nil {
			return fmt.Errorf("import %s: %w", x.ID, err)
		}
		body, _ := res.LastInsertId()
		if _, err := insMsg.ExecContext(ctx, messageArgs(m.SessionID, m, body)...); err != nil {
			return fmt.Errorf("import %s message %d: %w", x.ID, m.Seq, err)
		}
	}
	return nil
}
