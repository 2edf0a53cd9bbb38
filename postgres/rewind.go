package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// rewindForkSQL inserts the fork a rewind makes, from its source's row:
// the whole conversation's counters, its start (now at the latest) and
// last activity times, as it holds the conversation as it was, and the
// usage of the turns it takes. $1 id, $2 title, $3 fork turn, $4 now,
// $5 source id, $6… the usage.
const rewindForkSQL = `INSERT INTO sessions (id, user_id, key, surface, title, description,
	kind, parent_id, fork_turn, project_id, project_name, project_root, cwd, model, provider,
	profile, message_count, turn_count, summary_seq, last_prompt,
	input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
	cost_usd, api_calls, compactions, created_at, updated_at, git_branch)
	SELECT $1, s.user_id, NULL, s.surface, $2, s.description, 'fork', s.id, $3::integer, s.project_id,
		s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile, s.message_count,
		s.turn_count, s.summary_seq, s.last_prompt, $6, $7, $8, $9, $10, $11, $12, $13,
		LEAST($4, s.created_at), s.updated_at, s.git_branch
	FROM sessions s
	WHERE s.id = $5`

// Rewind implements loom.Store. Nothing is copied or moved: the fork
// reads the whole conversation from the rows where it is, the session
// reads the messages it keeps from the same rows and stores its next
// ones under a new id (sqlstore.RewindPlan), so a rewind writes a session
// row and a few spans, whatever the session's length.
func (s *Store) Rewind(ctx context.Context, id string, opts loom.RewindOptions) (*loom.Session, error) {
	var out *loom.Session
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		if !storable(id) {
			return loom.NotFound(id)
		}
		st, err := s.beginWrite(ctx, tx, id)
		if err != nil {
			return err
		}
		src := st.cur
		if src == nil {
			return loom.NotFound(id)
		}
		if err := st.check(src.ID); err != nil {
			return err
		}
		plan, err := sqlstore.PlanRewind(src, opts, s.forkReads(ctx, tx, src))
		if err != nil {
			return err
		}
		spans, err := readSpans(ctx, tx, src.ID)
		if err != nil {
			return err
		}
		f, fu, u := plan.Fork, plan.ForkUsage, plan.KeepUsage
		now := ms(s.Now())
		b := &pgx.Batch{}
		b.Queue(rewindForkSQL, f.ID, f.Title, f.Turn, now, src.ID,
			fu.InputTokens, fu.OutputTokens, fu.ReasoningTokens, fu.CacheReadTokens, fu.CacheWriteTokens,
			fu.CostUSD, fu.APICalls, fu.Compactions)
		queueSpans(b, f.ID, sqlstore.InheritSpans(spans, f.LastSeq, f.ID))
		queueSpans(b, src.ID, sqlstore.InheritSpans(spans, plan.KeepSeq, plan.Store))
		b.Queue(`UPDATE sessions SET message_count = $2, turn_count = $3, last_prompt = $4,
			summary_seq = $5, input_tokens = $6, output_tokens = $7, reasoning_tokens = $8, cache_read_tokens = $9,
			cache_write_tokens = $10, cost_usd = $11, api_calls = $12, compactions = $13, updated_at = $14
			WHERE id = $1`, src.ID, plan.KeepSeq, f.Turn, clean(plan.KeepPrompt), plan.KeepSummarySeq,
			u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens,
			u.CostUSD, u.APICalls, u.Compactions, now)
		b.Queue(`SELECT `+sessionColumns+sessionFrom+`WHERE s.id = $1`, f.ID)
		br := tx.SendBatch(ctx, b)
		defer br.Close()
		for range b.Len() - 1 {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("rewind %s: %w", src.ID, err)
			}
		}
		if out, err = rowscan.Session(br.QueryRow(), s.live); err != nil {
			return fmt.Errorf("rewind %s: %w", src.ID, err)
		}
		return br.Close()
	})
	return out, err
}
