package importer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/loomhq/loom"
)

// Importers of one source file take turns (loom.SourceLocker): a hook,
// a watcher and a one-shot import may all run at once on a file its
// tool is still writing. Each takes the file's lock before it reads
// the file, and keeps it until what it read is written and recorded as
// read (the batch's flush), so that no two of them compare the same
// session with the source at once: one appending what the other has
// just appended would store messages twice, or make forks of a session
// that only grew.
//
// An importer that finds the lock taken writes what it holds first
// (its batch, releasing its own locks, so that two importers waiting on
// each other's files cannot wait forever), then waits for the lock, and
// then looks again at what the other importer recorded: a file that it
// imported as it is now is not read again.

// lockWait bounds the pause between two attempts at a taken lock.
const lockWait = 100 * time.Millisecond

// lockSource takes the import lock of bundle name (im.current), when
// the run writes: every engine has source locks (loom.Engine). waited
// says the lock was taken by another importer first.
func (im *Importer) lockSource(ctx context.Context, name string) (waited bool, err error) {
	if im.DryRun {
		return false, nil
	}
	path := sourcePath(name)
	pause := time.Millisecond
	for {
		lease, err := im.Store.LockSource(ctx, im.UserID, path)
		if err == nil {
			im.current = lease
			return waited, nil
		}
		if loom.ErrorCode(err) != loom.ELOCKED {
			return waited, fmt.Errorf("lock %s for import: %w", name, err)
		}
		if !waited {
			waited = true
			if err := im.flush(ctx); err != nil {
				return waited, err
			}
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return waited, ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, lockWait)
	}
}

// sourcePath is the file path names, as one spelling whatever the
// importer was given (a relative path, a link): what its lock is taken
// on.
func sourcePath(name string) string {
	p, err := filepath.Abs(name)
	if err != nil {
		return name
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// release frees the batch's source locks, whatever ctx has become.
func (b *batch) release(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	var errs []error
	for _, l := range b.leases {
		errs = append(errs, l.Release(ctx))
	}
	b.leases = nil
	return errors.Join(errs...)
}

// holdCurrent hands the lock of the bundle being read to the batch that
// now holds what it read.
func (im *Importer) holdCurrent() {
	if im.current != nil {
		im.pending.leases = append(im.pending.leases, im.current)
		im.current = nil
	}
}

// releaseCurrent frees the lock of the bundle being read when no batch
// holds it: the bundle failed, or added nothing to record.
func (im *Importer) releaseCurrent(ctx context.Context) {
	if im.current != nil {
		im.current.Release(context.WithoutCancel(ctx))
		im.current = nil
	}
}
