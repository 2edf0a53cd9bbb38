package sqlite

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
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
	out := make([]*loom.SessionData, 0, len(ids))
	for _, id := range ids {
		x, err := s.sessionTx(ctx, tx, id)
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
