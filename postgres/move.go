package postgres

import (
	"context"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/sessionstore"
)

var (
	_ sessionstore.SessionSteps = (*writeTx)(nil)
	_ loom.ProjectMover         = (*Store)(nil)
)

// ProjectSessions implements sessionstore.SessionSteps, locking the rows until
// the transaction ends. A user or project id PostgreSQL cannot hold has
// no sessions.
func (w *writeTx) ProjectSessions(ctx context.Context, userID, projectID string) ([]*loom.Session, error) {
	if !storable(userID, projectID) {
		return nil, nil
	}
	q, args := query.ProjectSessions(dialect, userID, projectID)
	return w.s.querySessions(ctx, w.tx, q+" FOR UPDATE OF s", args...)
}
