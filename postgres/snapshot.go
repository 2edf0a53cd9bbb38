package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
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
	out := make([]*loom.SessionData, 0, len(ids))
	for _, id := range ids {
		x, err := s.sessionTx(ctx, tx, id, "")
		if loom.ErrorCode(err) == loom.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, err
		}
		msgs, err := messagesOf(ctx, tx, x.ID, q)
		if err != nil {
			return nil, err
		}
		out = append(out, &loom.SessionData{Session: x, Messages: msgs})
	}
	return out, nil
}
