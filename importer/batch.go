package importer

import (
	"context"
	"errors"
	"fmt"

	"github.com/loomhq/loom"
)

// batch is what several bundles hold, written in one transaction with
// the records of the files they came from (loom.ImportWrite): one
// commit (and one sync to disk) for many small files, and a file is
// recorded as read exactly when what it held is stored.
type batch struct {
	w    loom.ImportWrite
	keys map[string]bool
	msgs int
	// leases are the import locks of the files the batch was read from
	// (lock.go), released once it is written.
	leases []loom.Lease
	// files are the bundles read into the batch, to name in an error.
	files []string
	// calls are the sessions that count the calls the batch records
	// (w.Calls), by call.
	calls map[string]string
	// originals is the size of the compressed chunks of w.Originals.
	originals int
	// bytes is about what the messages of the batch hold (Message.Size).
	bytes int
}

// Batch bounds: a batch is written once it holds this many sessions or
// changes, or messages, or about this many bytes of messages. The bytes
// bound keeps a batch's pages (its bodies twice over, as parts and as
// search text, with the search index's) within what the SQLite writer
// holds in memory (its page cache, 16 MB): a batch of tool output
// several times that made SQLite write pages to the WAL in the middle
// of the transaction, read them back and write them again at its
// commit, most of a second of the writer's time on a history of 327 MB
// (docs/performance.md); a commit costs one sync.
const (
	batchSessions = 500
	batchMessages = 20000
	batchBytes    = 8 << 20
)

// add adds a new session.
func (b *batch) add(d *loom.SessionData) {
	b.w.Sessions = append(b.w.Sessions, d)
	b.touch(d.Session.Key)
	b.msgs += len(d.Messages)
	for _, m := range d.Messages {
		b.bytes += m.Size()
	}
}

// change adds a change to session key, imported before.
func (b *batch) change(key string, c loom.ImportChange) {
	b.w.Changes = append(b.w.Changes, c)
	b.touch(key)
	b.msgs += len(c.Messages)
	for _, m := range c.Messages {
		b.bytes += m.Size()
	}
}

// touch notes that the batch writes the session with key, which a later
// bundle of it must not read from the store before the batch is written.
func (b *batch) touch(key string) {
	if b.keys == nil {
		b.keys = map[string]bool{}
	}
	b.keys[key] = true
}

func (b *batch) full() bool {
	return len(b.w.Sessions)+len(b.w.Changes) >= batchSessions || b.msgs >= batchMessages || b.bytes >= batchBytes
}

// flush writes the batch: its sessions, the changes to sessions
// imported before and the records of their files, in one transaction
// (loom.ImportApplier). Then it frees the batch's
// source locks; a batch that could not be written is dropped all the
// same, so that the next run reads its files again rather than write
// it again.
func (im *Importer) flush(ctx context.Context) (err error) {
	b := &im.pending
	defer func() {
		files := b.files
		rerr := b.release(ctx)
		*b = batch{}
		if err != nil {
			err = inFiles(files, err)
		} else {
			err = rerr
		}
	}()
	if im.DryRun || b.w.Empty() {
		return nil
	}
	if err := im.Store.ApplyImport(ctx, &b.w); err != nil {
		return err
	}
	for call, id := range b.calls {
		if im.counted == nil {
			im.counted = map[string]string{}
		}
		im.counted[call] = id
	}
	return nil
}

// FileError is an error of an import that stopped at a source file:
// File names it (the first one, when a batch of several failed).
type FileError struct {
	File string
	Err  error
}

func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// inFiles is err naming the first of files it came from, unless it names
// one already.
func inFiles(files []string, err error) error {
	var fe *FileError
	if len(files) == 0 || errors.As(err, &fe) || errors.Is(err, context.Canceled) {
		return err
	}
	if len(files) > 1 {
		err = fmt.Errorf("%w (writing it with %d other files)", err, len(files)-1)
	}
	return &FileError{File: files[0], Err: err}
}
