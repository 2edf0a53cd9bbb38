package postgres

import (
	"github.com/loomhq/loom/internal/sqlstore/query"
)

// rewindForkSQL inserts the fork a rewind makes, from its source's row:
// the whole conversation's counters, its start (now at the latest) and
// last activity times, as it holds the conversation as it was, and the
// usage of the turns it takes. $1 id, $2 title, $3 fork turn, $4 now,
// $5 source id, $6… the usage.
const rewindForkSQL = `INSERT INTO sessions (` + query.ForkColumns + `)
	SELECT $1, s.user_id, NULL, s.surface, $2, s.description, 'fork', s.id, $3::integer, s.project_id,
		s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile, s.message_count,
		s.turn_count, s.summary_seq, s.last_prompt, $6, $7, $8, $9, $10, $14, $11, $12, $13,
		LEAST($4, s.created_at), s.updated_at, s.git_branch
	FROM sessions s
	WHERE s.id = $5`
