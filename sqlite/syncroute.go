package sqlite

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// The kinds of fork sync_forks keeps: a fork made by `loom session
// fork`, the fork a rewind moves a session's later messages to, and a
// conflict fork.
const (
	forkPlain    = "fork"
	forkRewind   = "rewind"
	forkConflict = "conflict"
)

// saveFork keeps where fork id splits from session parent: it shares
// parent's messages 1 to base.
func saveFork(ctx context.Context, w writes, id, parent string, base int64, kind string) error {
	if _, err := w.ExecContext(ctx, `INSERT INTO sync_forks (id, parent, base, kind) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET parent = excluded.parent, base = excluded.base, kind = excluded.kind`,
		id, parent, base, kind); err != nil {
		return fmt.Errorf("keep fork %s: %w", id, err)
	}
	return nil
}

// maxRoute bounds how many sessions locate looks in.
const maxRoute = 10_000

// locate returns the session that holds message mid at seq, for a record
// of session named that names the message: named when it holds it, else
// the nearest of the sessions a rewind or a conflict moved named's
// messages to, and theirs, breadth first (docs/sync.md, "Concurrent
// appends"). It returns nil when none does: the record that brings the
// message has not been applied here yet. seq 0 names no message, and is
// named's.
func locate(ctx context.Context, w writes, named *loom.Session, seq int64, mid string) (*loom.Session, error) {
	if seq < 1 {
		return named, nil
	}
	queue := []string{named.ID}
	seen := map[string]bool{named.ID: true}
	for len(queue) > 0 && len(seen) <= maxRoute {
		id := queue[0]
		queue = queue[1:]
		got, err := w.MessageID(ctx, id, seq)
		if err != nil {
			return nil, fmt.Errorf("find message %s: %w", mid, err)
		}
		if got == mid {
			if id == named.ID {
				return named, nil
			}
			return w.SessionForWrite(ctx, id)
		}
		moved, err := rowscan.All(ctx, rowsOf{w}, rowscan.String,
			`SELECT id FROM sync_forks WHERE parent = ? AND kind <> 'fork' ORDER BY base, id`, id)
		if err != nil {
			return nil, fmt.Errorf("find message %s: %w", mid, err)
		}
		for _, m := range moved {
			if !seen[m] {
				seen[m] = true
				queue = append(queue, m)
			}
		}
	}
	return nil, nil
}

// locateOrWait is locate, where finding no session is ErrSyncWaits for
// the record that names message mid at seq of session named.
func locateOrWait(ctx context.Context, w writes, named *loom.Session, seq int64, mid string) (*loom.Session, error) {
	s, err := locate(ctx, w, named, seq, mid)
	if err == nil && s == nil {
		err = fmt.Errorf("%w: message %s at seq %d, which neither session %s nor a session its messages moved to holds here yet",
			ErrSyncWaits, mid, seq, named.ID)
	}
	return s, err
}
