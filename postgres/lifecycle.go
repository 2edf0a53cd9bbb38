package postgres

import (
	"context"

	"github.com/loomhq/loom/sessionstore"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/query"
)

// forkSessionSQL inserts a fork's session row from its source's:
// $1 id, $2 key, $3 title, $4 fork turn, $5 last seq inherited, $6 now,
// $7 source id, $8 last prompt, $9 latest summary.
const forkSessionSQL = `INSERT INTO sessions (` + query.ForkColumns + `)
	SELECT $1, s.user_id, $2, s.surface, $3, s.description, 'fork', s.id, $4::integer, s.project_id,
		s.project_name, s.project_root, s.cwd, s.model, s.provider, s.profile, $5::bigint, $4::integer,
		$9::bigint, $8, 0, 0, 0, 0, 0, 0, 0, 0, 0, $6, $6, s.git_branch
	FROM sessions s
	WHERE s.id = $7`

// Fork implements loom.Store with sessionstore.Fork.
func (s *Store) Fork(ctx context.Context, id string, opts loom.ForkOptions) (*loom.Session, error) {
	var out *loom.Session
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		// FOR SHARE waits for a message being appended to the source and
		// keeps its parts and spans from changing until the fork is made.
		src, err := s.sessionTx(ctx, tx, id, "FOR SHARE OF s")
		if err != nil {
			return err
		}
		out, err = sessionstore.Fork(ctx, &writeTx{s: s, tx: tx}, noLog, src, opts)
		return err
	})
	return out, err
}

// Delete implements loom.Store with sessionstore.Delete.
func (s *Store) Delete(ctx context.Context, id string, opts loom.DeleteOptions) ([]*loom.Session, error) {
	var out []*loom.Session
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = sessionstore.Delete(ctx, &writeTx{s: s, tx: tx}, noLog, id, opts, s.holder.Owner, s.Now())
		return err
	})
	return out, err
}

// Restore implements loom.Store with sessionstore.Restore.
func (s *Store) Restore(ctx context.Context, id string) error {
	return s.withTx(ctx, func(tx pgx.Tx) error {
		return sessionstore.Restore(ctx, &writeTx{s: s, tx: tx}, noLog, id)
	})
}

// Prune implements loom.Store with sessionstore.Prune: the sessions chosen
// go to the trash with their sub-agent sessions in one statement.
func (s *Store) Prune(ctx context.Context, opts loom.PruneOptions) (*loom.PruneResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if !storable(opts.UserID, opts.ProjectID) {
		return &loom.PruneResult{}, nil
	}
	var res *loom.PruneResult
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		var err error
		res, err = sessionstore.Prune(ctx, &writeTx{s: s, tx: tx}, noLog, opts, s.holder.Owner, s.Now())
		return err
	})
	return res, err
}
