package sqlite

import (
	"context"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/query"
	"github.com/loomhq/loom/sessionstore"
)

var (
	_ sessionstore.SessionSteps = writes{}
	_ loom.ProjectMover         = (*Store)(nil)
)

// ProjectSessions implements sessionstore.SessionSteps: the transaction is
// immediate, and holds SQLite's one write lock.
func (w writes) ProjectSessions(ctx context.Context, userID, projectID string) ([]*loom.Session, error) {
	q, args := query.ProjectSessions(dialect, userID, projectID)
	return w.s.querySessions(ctx, w, q, args...)
}
