package postgres

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/query"
)

// familyDialect writes the family query for PostgreSQL: ids as a text
// array, integers cast for the planner.
var familyDialect = query.FamilyDialect{
	Start: "SELECT s.id FROM sessions s WHERE s.id = ANY(?::text[]) AND",
	IDs:   func(ids []string) any { return ids },
	User:  func(alias string) string { return alias + ".user_id" },
	Int:   "?::integer",
}

// Family implements loom.Store: one recursive query finds every session
// of the families, then loom.ArrangeFamily orders them. Ids PostgreSQL
// cannot hold name no session.
func (s *Store) Family(ctx context.Context, q loom.FamilyQuery) ([]*loom.Session, error) {
	var ids []string
	for _, id := range q.IDs {
		if storable(id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 || !storable(q.UserID) {
		return nil, nil
	}
	fq := q
	fq.IDs = ids
	text, args := query.Family(dialect, familyDialect, fq)
	found, err := s.querySessionsWith(ctx, s.pool, text, args...)
	if err != nil {
		return nil, fmt.Errorf("read lineage: %w", err)
	}
	return loom.ArrangeFamily(q, found), nil
}
