package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
)

// The hub's checkpoints of teams' chains (loom.TeamCheckpoints): see
// migrations/0022_team_checkpoints.sql. The store keeps them as given;
// the hub checks each one's MAC on load.

// TeamCheckpoint implements loom.TeamCheckpoints.
func (s *Store) TeamCheckpoint(ctx context.Context, team, keyID string) (*loom.TeamCheckpoint, error) {
	c := loom.TeamCheckpoint{KeyID: keyID}
	err := s.pool.QueryRow(ctx, `SELECT seq, state, mac FROM team_checkpoints WHERE team_id = $1 AND key_id = $2`, team, keyID).Scan(&c.Seq, &c.State, &c.MAC)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("team %s: checkpoint: %w", team, err)
	}
	return &c, nil
}

// PutTeamCheckpoint implements loom.TeamCheckpoints: it replaces the
// kept one whatever its entry, as a row the hub found damaged must not
// stay for good.
func (s *Store) PutTeamCheckpoint(ctx context.Context, team string, c loom.TeamCheckpoint) error {
	if _, err := s.pool.Exec(ctx, `INSERT INTO team_checkpoints (team_id, key_id, seq, state, mac, written_at)
		VALUES ($1, $2, $3, $4, $5, now())
		ON CONFLICT (team_id, key_id) DO UPDATE SET seq = EXCLUDED.seq, state = EXCLUDED.state, mac = EXCLUDED.mac, written_at = now()`, team, c.KeyID, c.Seq, c.State, c.MAC); err != nil {
		return fmt.Errorf("team %s: checkpoint at entry %d: %w", team, c.Seq, err)
	}
	return nil
}

var _ loom.TeamCheckpoints = (*Store)(nil)
