package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/loomhq/loom"
)

// Family implements loom.Store: one recursive query finds every session
// of the families, then loom.ArrangeFamily orders them.
func (s *Store) Family(ctx context.Context, q loom.FamilyQuery) ([]*loom.Session, error) {
	if len(q.IDs) == 0 {
		return nil, nil
	}
	query, args := familySQL(q)
	found, err := s.querySessionsWith(ctx, reads{s}, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read lineage: %w", err)
	}
	return loom.ArrangeFamily(q, found), nil
}

// familySQL builds the family query: start at the named sessions, climb
// to their roots when asked, then walk down. The depth bound keeps a
// cycle of parent links from looping. Every value is a parameter, so the
// query text (and its prepared statement) is one of a few.
func familySQL(q loom.FamilyQuery) (string, []any) {
	ids, _ := json.Marshal(q.IDs)
	var b strings.Builder
	var args []any
	add := func(sql string, a ...any) {
		b.WriteString(sql)
		args = append(args, a...)
	}
	// live keeps rows of the query's user that are not in the trash.
	// The unary + keeps SQLite from looking rows up by user: ids and
	// parent ids find them, and CROSS JOIN fixes the order in which
	// they are joined.
	live := func(alias string) {
		add(alias + ".deleted_at IS NULL")
		if q.UserID != "" {
			add(" AND +"+alias+".user_id = ?", q.UserID)
		}
	}
	subagents := func(alias string) {
		if q.SubagentsOnly {
			add(alias + ".kind = 'subagent' AND ")
		}
	}
	add("WITH RECURSIVE start(id) AS (SELECT s.id FROM json_each(?) j CROSS JOIN sessions s ON s.id = j.value WHERE ", string(ids))
	live("s")
	add(")")
	seeds := "start"
	if q.FromRoot {
		add(`, up(start, id, hops) AS (SELECT id, id, 0 FROM start UNION SELECT up.start, p.id, up.hops + 1 FROM up
			CROSS JOIN sessions c ON c.id = up.id CROSS JOIN sessions p ON p.id = c.parent_id WHERE up.hops < ? AND `, q.Depth())
		subagents("c")
		live("p")
		// Each session's root is the ancestor farthest up (on a cycle,
		// wherever the depth bound stopped the climb).
		add(`), roots(id) AS (SELECT DISTINCT u.id FROM up u WHERE u.hops = (SELECT max(v.hops) FROM up v WHERE v.start = u.start))`)
		seeds = "roots"
	}
	add(`, fam(id, depth) AS (SELECT id, 0 FROM `+seeds+` UNION ALL SELECT s.id, fam.depth + 1 FROM fam
		CROSS JOIN sessions s ON s.parent_id = fam.id WHERE fam.depth < ? AND `, q.Depth())
	subagents("s")
	live("s")
	if q.Limit <= 0 {
		// Order is made in Go; the database only finds the rows.
		add(`) SELECT ` + sessionColumns + sessionFrom + `WHERE s.id IN (SELECT id FROM fam)`)
		return b.String(), args
	}
	// A bound keeps the nearest generations: the database orders.
	add(`) SELECT `+sessionColumns+` FROM (SELECT id, min(depth) AS depth FROM fam GROUP BY id) f
		CROSS JOIN sessions s ON s.id = f.id LEFT JOIN locks l ON l.session_id = s.id
		ORDER BY f.depth, s.created_at, s.id LIMIT ?`, q.Limit)
	return b.String(), args
}
