package postgres

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
)

// A hub of several processes on one database (loom.HubLocks): each place
// a push takes, and each user lock, is a session advisory lock of the
// server, held on a connection of its own until it is given back. A
// process that dies closes its connections and the server frees their
// locks at once: nothing a killed hub held binds its other processes.
// The key of a lock names the schema, since the schemas of one database
// share the server's advisory locks.

// maxLockConns bounds the connections that hold locks: a hub process
// runs hub.MaxPushes (8) pushes of each scope (sync, team) at once, each
// holding a place, and a user's first push of sync holds its key lock
// besides: 24 at most.
const maxLockConns = 24

// lockKeySQL is the advisory lock of a name in this store's schema.
const lockKeySQL = `hashtextextended('loom hub ' || current_schema() || ' ' || $1::text, 0)`

var _ loom.HubLocks = (*Store)(nil)

// lockPool returns the pool of the connections that hold locks, made at
// the first lock with the settings of the store's pool: they stay held
// as long as the push, and would otherwise starve its store work of
// connections.
func (s *Store) lockPool(ctx context.Context) (*pgxpool.Pool, error) {
	s.locksMu.Lock()
	defer s.locksMu.Unlock()
	if s.locks != nil {
		return s.locks, nil
	}
	cfg := s.pool.Config().Copy()
	cfg.MaxConns, cfg.MinConns = maxLockConns, 0
	cfg.MaxConnIdleTime = time.Minute
	// A lock statement cut short may have taken its lock: its
	// connection is closed, not kept (closeOnCancel), and the server
	// does not end it by its deadline (boundNear) either, so that a
	// wait cut by its context says so (context.DeadlineExceeded).
	cfg.ConnConfig.BuildContextWatcherHandler = closeOnCancel
	if prepare := cfg.PrepareConn; prepare != nil {
		cfg.PrepareConn = func(ctx context.Context, c *pgx.Conn) (bool, error) {
			return prepare(context.WithoutCancel(ctx), c)
		}
	}
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("hub locks: %w", err)
	}
	s.locks = p
	return p, nil
}

// TakePush implements loom.HubLocks.
func (s *Store) TakePush(ctx context.Context, scope, user string, slots int) (func(), bool, error) {
	p, err := s.lockPool(ctx)
	if err != nil {
		return nil, false, err
	}
	conn, err := p.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("hub locks: %w", err)
	}
	for i := range slots {
		name := "push " + scope + " " + strconv.Itoa(i) + " " + user
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+lockKeySQL+`)`, name).Scan(&ok); err != nil {
			conn.Release()
			return nil, false, fmt.Errorf("hub locks: %w", err)
		}
		if ok {
			return unlocker(conn, name), true, nil
		}
	}
	conn.Release()
	return nil, false, nil
}

// LockUser implements loom.HubLocks.
func (s *Store) LockUser(ctx context.Context, name, user string) (func(), error) {
	p, err := s.lockPool(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := p.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("hub locks: %w", err)
	}
	name = "user " + name + " " + user
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+lockKeySQL+`)`, name); err != nil {
		// A wait cut by ctx may leave the connection in any state:
		// closing it frees whatever it holds.
		conn.Conn().Close(context.Background())
		conn.Release()
		return nil, fmt.Errorf("hub locks: %w", err)
	}
	return unlocker(conn, name), nil
}

// unlocker returns the release of the lock name that conn holds: the
// lock is freed and the connection goes back to the pool, or, when the
// unlock fails, the connection is closed, which frees its locks too.
func unlocker(conn *pgxpool.Conn, name string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var ok bool
			if err := conn.QueryRow(ctx, `SELECT pg_advisory_unlock(`+lockKeySQL+`)`, name).Scan(&ok); err != nil || !ok {
				conn.Conn().Close(ctx)
			}
			conn.Release()
		})
	}
}
