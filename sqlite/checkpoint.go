package sqlite

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"sync/atomic"
)

// Checkpoints behind an import. In WAL mode the connection that commits
// copies the WAL's pages into the database file once the WAL holds more
// than 1000 pages (wal_autocheckpoint): after every import batch, which
// holds tens of megabytes, the writer copied the whole batch again
// (reading it back from the WAL, writing it, syncing the file) before it
// could begin the next one — the import's one writer, on its one core,
// doing a second write of everything. A big import's transaction (its
// messages bigImport or more) commits without that copy (ImportRows
// sets wal_autocheckpoint to 0 on the writer), and a checkpointer of
// the store's own, on a connection of
// its own, copies it beside the writer while the writer goes on
// (PRAGMA wal_checkpoint(PASSIVE): it copies what is committed, and
// neither waits for nor holds up the writer or the readers). The next
// transaction that is not an import puts wal_autocheckpoint back
// (begin), so that every other write checkpoints as SQLite does by
// default. What is committed is as durable either way: a commit syncs
// the WAL (synchronous=FULL), and a checkpoint not made yet is made by
// the next one, or when the store is opened again.
type checkpointer struct {
	mu      sync.Mutex
	signal  chan struct{} // nil until the first import's commit
	done    chan struct{}
	closed  bool
	db      *sql.DB
	pending bool // the writer commits without checkpointing (begin puts it back)
	// frames is how many frames the WAL held at the last checkpoint.
	frames atomic.Int64
}

// walBound bounds the WAL behind imports, in frames (pages): the WAL
// starts again from its beginning only when a write begins after a
// checkpoint has copied all of it, so a checkpointer that never catches
// up with a writer committing batch after batch would let it grow with
// the import. Once a checkpoint finds it this long, the import's next
// commit waits for a checkpoint of all of it (RESTART) before it
// returns, as SQLite's own does.
const walBound = 16384

// walAutocheckpoint is SQLite's default, which the writer goes back to.
const walAutocheckpoint = 1000

// bigImport is the size of an import (loom.Message.Size of its
// messages) whose commit is checkpointed behind the writer: about the
// 1000 pages past which its own commit would checkpoint. A smaller one,
// such as a hook's or a watcher's import of a grown file, commits as
// any write, so that a watcher's many small imports do not each make a
// checkpoint (and its sync of the database file) of their own: such
// syncs beside appends' made their tail worse (docs/performance.md).
const bigImport = 4 << 20

// caughtUp makes a checkpoint of the whole WAL on the writer, waiting
// for the checkpointer, when the WAL has grown past walBound.
func (s *Store) caughtUp() {
	if s.ckpt.frames.Load() < walBound {
		return
	}
	var busy, log, done int
	if err := s.writer.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(RESTART)`).Scan(&busy, &log, &done); err != nil {
		slog.Debug("sqlite: checkpoint", "err", err)
		return
	}
	if busy == 0 {
		s.ckpt.frames.Store(0)
	}
}

// checkpointBehind asks for a checkpoint after an import's commit,
// starting the checkpointer on the first.
func (s *Store) checkpointBehind() {
	c := &s.ckpt
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = true
	if c.closed {
		return
	}
	if c.signal == nil {
		db, err := sql.Open(driverName, dsn(s.path, "_pragma=busy_timeout(30000)"))
		if err != nil {
			slog.Debug("sqlite: checkpointer", "err", err)
			return
		}
		db.SetMaxOpenConns(1)
		c.db, c.signal, c.done = db, make(chan struct{}, 1), make(chan struct{})
		go c.run()
	}
	select {
	case c.signal <- struct{}{}:
	default: // one is asked for already, and copies this commit too
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	for range c.signal {
		var busy, log, done int
		err := c.db.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done)
		if err != nil {
			slog.Debug("sqlite: checkpoint", "err", err)
			continue
		}
		c.frames.Store(int64(log))
	}
}

// autocheckpointAgain reports, once after imports, that the writer must
// checkpoint as SQLite does by default again.
func (s *Store) autocheckpointAgain() bool {
	c := &s.ckpt
	c.mu.Lock()
	defer c.mu.Unlock()
	again := c.pending
	c.pending = false
	return again
}

// stop ends the checkpointer, after the checkpoint it is making; the
// writer's close checkpoints what is left.
func (c *checkpointer) stop() error {
	c.mu.Lock()
	c.closed = true
	signal := c.signal
	c.mu.Unlock()
	if signal == nil {
		return nil
	}
	close(signal)
	<-c.done
	return c.db.Close()
}
