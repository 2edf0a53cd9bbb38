package importer

import (
	"context"
	"errors"
	"fmt"

	"github.com/loomhq/loom"
)

// batch is new sessions of several bundles that are written in one
// transaction, with the records of the files they came from: one commit
// (and one sync to disk) for many small files.
type batch struct {
	data []*loom.SessionData
	recs []loom.ImportedFile
	keys map[string]bool
	msgs int
	// leases are the import locks of the files the batch was read from
	// (lock.go), released once it is written.
	leases []loom.Lease
	// files are the bundles read into the batch, to name in an error.
	files []string
}

// Batch bounds: a batch is written once it holds this many sessions or
// messages.
const (
	batchSessions = 500
	batchMessages = 20000
)

func (b *batch) add(d *loom.SessionData) {
	if b.keys == nil {
		b.keys = map[string]bool{}
	}
	b.data = append(b.data, d)
	b.keys[d.Session.Key] = true
	b.msgs += len(d.Messages)
}

func (b *batch) full() bool { return len(b.data) >= batchSessions || b.msgs >= batchMessages }

// flush writes the batch: its sessions, then the records of their files
// (a crash between the two only makes the next run read those files
// again, and find their sessions complete). Then it frees the batch's
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
	if len(b.data) > 0 {
		if err := im.Store.Import(ctx, b.data); err != nil {
			return err
		}
	}
	if len(b.recs) > 0 {
		if err := im.Store.RecordImportedFiles(ctx, b.recs); err != nil {
			return err
		}
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
