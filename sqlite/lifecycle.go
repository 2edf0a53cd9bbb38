package sqlite

import (
	"github.com/loomhq/loom/internal/sqlstore/query"
)

// The statements of a fork, and of its plan's reads (forkReads).
const (
	forkSessionSQL = `INSERT INTO sessions (` + query.ForkColumns + `)
	SELECT ?, s.user_id, ?, s.surface, ?, s.description, 'fork', s.id, ?, s.project_id,
		s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile, ?, ?, ?, ?,
		0, 0, 0, 0, 0, 0, 0, 0, 0, ?, ?, s.git_branch
	FROM sessions s
	WHERE s.id = ?`
	turnFromSQL = `SELECT m.turn FROM spans sp CROSS JOIN messages m ON m.session_id = sp.store_id
	AND m.seq BETWEEN max(sp.first_seq, ?) AND sp.last_seq
	WHERE sp.session_id = CAST(? AS TEXT)` + spanOrder + ` LIMIT 1`
	lastUserCond   = ` AND m.role = 'user'`
	lastSummarySQL = `SELECT m.seq FROM spans sp CROSS JOIN messages m ON m.session_id = sp.store_id
	AND m.seq BETWEEN sp.first_seq AND min(sp.last_seq, ?)
	WHERE sp.session_id = CAST(? AS TEXT) AND m.role = 'summary'` + spanOrderDesc + ` LIMIT 1`
	// titlesLikeSQL finds the titles that start with ?3 by a range on
	// sessions_title, without reading the user's other sessions (10 ms
	// among 10,000): NOCASE folds ASCII as lower does, and U+10FFFF
	// sorts after anything that can follow ?3.
	titlesLikeSQL = `SELECT title FROM sessions
	WHERE user_id = ?1 AND title >= ?3 COLLATE NOCASE AND title < ?3 || char(1114111) COLLATE NOCASE
	AND deleted_at IS NULL AND lower(substr(title, 1, ?2)) = lower(?3)`
)

// usageSQL is the usage of session ?3's messages ?1 to ?2.
var usageSQL = `SELECT ` + query.UsageTotals("m.") + ` FROM spans sp CROSS JOIN messages m ON m.session_id = sp.store_id
	AND m.seq BETWEEN max(sp.first_seq, ?) AND min(sp.last_seq, ?)
	WHERE sp.session_id = CAST(? AS TEXT)`

// forkWrites are the statements of forks and rewinds, prepared before
// the first fork or rewind (parsing them cost more than running them),
// not before every process's first write: 0.4–0.6 ms, five times the
// append's own statements.
var forkWrites = []string{forkSessionSQL, turnFromSQL, spanQuery(lastUserCond, true, true), lastSummarySQL,
	usageSQL, titlesLikeSQL, readSpansSQL, deleteSpansSQL, insertSpanSQL, rewindForkSQL, rewindKeepSQL}
