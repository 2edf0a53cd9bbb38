package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/query"
)

// familyDialect writes the family query for SQLite: ids as a JSON array,
// and joins in a fixed order, so that each step walks the primary key or
// the parent index from the sessions found.
var familyDialect = query.FamilyDialect{
	Start: "SELECT s.id FROM json_each(?) j CROSS JOIN sessions s ON s.id = j.value WHERE",
	IDs: func(ids []string) any {
		b, _ := json.Marshal(ids)
		return string(b)
	},
	User: func(alias string) string { return "+" + alias + ".user_id" },
	Int:  "?",
}

// Family implements loom.Store: one recursive query finds every session
// of the families, then loom.ArrangeFamily orders them.
func (s *Store) Family(ctx context.Context, q loom.FamilyQuery) ([]*loom.Session, error) {
	if len(q.IDs) == 0 {
		return nil, nil
	}
	text, args := query.Family(dialect, familyDialect, q)
	found, err := s.querySessionsWith(ctx, reads{s}, text, args...)
	if err != nil {
		return nil, fmt.Errorf("read lineage: %w", err)
	}
	return loom.ArrangeFamily(q, found), nil
}
