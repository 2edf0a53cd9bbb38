package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/loomhq/loom"
)

// rewindForkSQL inserts the fork a rewind makes, from its source's row:
// the whole conversation's counters, the usage of the turns it takes
// (those after seq $4), the source's last activity time. $1 id, $2 title,
// $3 fork turn, $4 last seq the source keeps, $5 now, $6 source id.
const rewindForkSQL = `INSERT INTO sessions (id, user_id, key, surface, title, description,
	kind, parent_id, fork_turn, project_id, project_name, project_root, cwd, model, provider,
	profile, message_count, turn_count, summary_seq, last_prompt,
	input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
	cost_usd, api_calls, compactions, created_at, updated_at, git_branch)
	SELECT ?1, s.user_id, NULL, s.surface, ?2, s.description, 'fork', s.id, ?3, s.project_id,
		s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile, s.message_count,
		s.turn_count, s.summary_seq, s.last_prompt,
		m.input_tokens, m.output_tokens, m.reasoning_tokens, m.cache_read_tokens,
		m.cache_write_tokens, m.cost_usd, m.api_calls, m.compactions, ?5, s.updated_at, s.git_branch
	FROM sessions s, (SELECT coalesce(sum(input_tokens), 0) AS input_tokens,
			coalesce(sum(output_tokens), 0) AS output_tokens,
			coalesce(sum(reasoning_tokens), 0) AS reasoning_tokens,
			coalesce(sum(cache_read_tokens), 0) AS cache_read_tokens,
			coalesce(sum(cache_write_tokens), 0) AS cache_write_tokens,
			coalesce(sum(cost_usd), 0) AS cost_usd, coalesce(sum(api_calls), 0) AS api_calls,
			coalesce(sum(compactions), 0) AS compactions
		FROM messages WHERE session_id = ?6 AND seq > ?4) m
	WHERE s.id = ?6`

// Rewind implements loom.Store. The fork gets copies of the messages
// the session keeps (sharing their bodies) and the later messages
// themselves, moved with their ids and bodies: nothing is re-indexed.
func (s *Store) Rewind(ctx context.Context, id string, opts loom.RewindOptions) (*loom.Session, error) {
	var out *loom.Session
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		src, err := s.sessionTx(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := s.checkWriter(ctx, tx, src.ID); err != nil {
			return err
		}
		plan, err := loom.PlanRewind(src, opts, s.forkReads(ctx, tx, src))
		if err != nil {
			return err
		}
		f := plan.Fork
		now := s.now()
		if _, err := tx.ExecContext(ctx, rewindForkSQL, f.ID, f.Title, f.Turn, plan.KeepSeq, now, src.ID); err != nil {
			return fmt.Errorf("rewind %s: %w", src.ID, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (session_id, seq, id, role, turn, body_id,
			model, provider, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
			cache_write_tokens, cost_usd, api_calls, compactions, error, created_at, completed_at)
			SELECT ?, seq, `+newMessageID+`, role, turn, body_id, model, provider, input_tokens,
				output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, cost_usd,
				api_calls, compactions, error, created_at, completed_at
			FROM messages m WHERE session_id = ? AND seq <= ?`, f.ID, src.ID, plan.KeepSeq); err != nil {
			return fmt.Errorf("rewind %s: copy messages: %w", src.ID, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET session_id = ? WHERE session_id = ? AND seq > ?`,
			f.ID, src.ID, plan.KeepSeq); err != nil {
			return fmt.Errorf("rewind %s: move messages: %w", src.ID, err)
		}
		if out, err = s.sessionTx(ctx, tx, f.ID); err != nil {
			return err
		}
		u := src.Usage
		u.Sub(out.Usage)
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET message_count = ?2, turn_count = ?3, last_prompt = ?4,
			summary_seq = coalesce((SELECT max(seq) FROM messages WHERE session_id = ?1 AND role = 'summary'), 0),
			input_tokens = ?5, output_tokens = ?6, reasoning_tokens = ?7, cache_read_tokens = ?8,
			cache_write_tokens = ?9, cost_usd = ?10, api_calls = ?11, compactions = ?12, updated_at = ?13
			WHERE id = ?1`, src.ID, plan.KeepSeq, f.Turn, plan.KeepPrompt,
			u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens,
			u.CostUSD, u.APICalls, u.Compactions, now); err != nil {
			return fmt.Errorf("rewind %s: %w", src.ID, err)
		}
		return nil
	})
	return out, err
}
