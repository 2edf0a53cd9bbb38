package sqlite

import (
	"github.com/loomhq/loom/internal/sqlstore/query"
)

// rewindForkSQL inserts the fork a rewind makes, from its source's row:
// the whole conversation's counters, its start (now at the latest) and
// last activity times, as it holds the conversation as it was, and the
// usage of the turns it takes. ?1 id, ?2 title, ?3 fork turn, ?4 now,
// ?5 source id, ?6… the usage (?14 its 1-hour cache writes).
const rewindForkSQL = `INSERT INTO sessions (` + query.ForkColumns + `)
	SELECT ?1, s.user_id, NULL, s.surface, ?2, s.description, 'fork', s.id, ?3, s.project_id,
		s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile, s.message_count,
		s.turn_count, s.summary_seq, s.last_prompt, ?6, ?7, ?8, ?9, ?10, ?14, ?11, ?12, ?13,
		MIN(?4, s.created_at), s.updated_at, s.git_branch
	FROM sessions s
	WHERE s.id = ?5`

// rewindKeepSQL sets the counters of a rewound session ?1 to those of
// the turns it keeps.
const rewindKeepSQL = `UPDATE sessions SET message_count = ?2, turn_count = ?3, last_prompt = ?4,
	summary_seq = ?5, input_tokens = ?6, output_tokens = ?7, reasoning_tokens = ?8, cache_read_tokens = ?9,
	cache_write_tokens = ?10, cache_write_1h_tokens = ?15, cost_usd = ?11, api_calls = ?12, compactions = ?13, updated_at = ?14
	WHERE id = ?1`
