package importer

import (
	"context"

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
// again, and find their sessions complete).
func (im *Importer) flush(ctx context.Context) error {
	b := &im.pending
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
	*b = batch{}
	return nil
}
