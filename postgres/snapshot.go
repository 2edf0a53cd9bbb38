package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
)

// ReadSessions implements loom.Store in one read-only REPEATABLE READ
// transaction: every statement of it sees the database as it was when
// the first one ran, so a rewind or an append committed meanwhile is
// seen whole or not at all, and the counters of a session row always
// describe the messages read with it. (Under the pool's default, READ
// COMMITTED, each statement would see what was committed when it
// began: a session row from before a rewind with messages from after.)
func (s *Store) ReadSessions(ctx context.Context, ids []string, q loom.MessageQuery) ([]*loom.SessionData, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	// Nothing to keep: a read-only transaction ends by rolling back.
	defer tx.Rollback(context.WithoutCancel(ctx))
	return sqlstore.ReadSessions(ids,
		func(id string) (*loom.Session, error) { return s.sessionTx(ctx, tx, id, "") },
		func(id string) ([]*loom.Message, error) { return messagesOf(ctx, tx, id, q) })
}
