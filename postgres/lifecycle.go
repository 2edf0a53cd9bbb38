package postgres

import (
	"github.com/loomhq/loom/internal/sqlstore/query"
)

// forkSessionSQL inserts a fork's session row from its source's:
// $1 id, $2 key, $3 title, $4 fork turn, $5 last seq inherited, $6 now,
// $7 source id, $8 last prompt, $9 latest summary.
const forkSessionSQL = `INSERT INTO sessions (` + query.ForkColumns + `)
	SELECT $1, s.user_id, $2, s.surface, $3, s.description, 'fork', s.id, $4::integer, s.project_id,
		s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile, $5::bigint, $4::integer,
		$9::bigint, $8, 0, 0, 0, 0, 0, 0, 0, 0, 0, $6, $6, s.git_branch
	FROM sessions s
	WHERE s.id = $7`
