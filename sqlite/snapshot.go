package sqlite

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
)

// ReadSessions implements loom.Store in one read transaction on a reader
// connection: in WAL mode it reads one snapshot of the database, taken
// at its first statement, so a rewind or an append committed meanwhile
// is seen whole or not at all, and the counters of a session row always
// describe the messages read with it.
func (s *Store) ReadSessions(ctx context.Context, ids []string, q loom.MessageQuery) ([]*loom.SessionData, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	tx, err := s.reader.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	// Nothing to keep: a read transaction ends by rolling back.
	defer tx.Rollback()
	return sqlstore.ReadSessions(ids,
		func(id string) (*loom.Session, error) { return s.sessionTx(ctx, tx, id) },
		func(id string) ([]*loom.Message, error) { return messagesOf(ctx, tx, id, q) })
}
