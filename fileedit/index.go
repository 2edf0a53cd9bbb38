package fileedit

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
)

// indexBatch is how many bodies one transaction of the catch-up reads.
const indexBatch = 500

// Index brings st's edit index up to date: it reads the bodies the
// store marked (stored since the last catch-up, or rewritten), finds
// their edits and stores them, a batch at a time, and returns how many
// bodies it read.
func Index(ctx context.Context, st loom.EditStore) (int, error) {
	total := 0
	for {
		src, err := st.UnindexedEdits(ctx, indexBatch)
		if err != nil {
			return total, fmt.Errorf("edit index: %w", err)
		}
		if len(src) == 0 {
			return total, nil
		}
		if err := st.PutEdits(ctx, src, fromBodies(src)); err != nil {
			return total, fmt.Errorf("edit index: %w", err)
		}
		total += len(src)
		if len(src) < indexBatch {
			return total, nil
		}
	}
}

// fromBodies are the edits of bodies, in their order, read on every
// core: decoding the bodies' JSON is most of a catch-up's work.
func fromBodies(src []loom.EditSource) []loom.IndexedEdit {
	workers := min(runtime.GOMAXPROCS(0), (len(src)+49)/50)
	found := make([][]loom.IndexedEdit, len(src))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(src); i += workers {
				found[i] = FromBody(&src[i])
			}
		})
	}
	wg.Wait()
	return slices.Concat(found...)
}

// FromBody are the edits of one stored body, as the index keeps them.
// Parts that do not decode give none: the index never stops at one
// damaged message.
func FromBody(s *loom.EditSource) []loom.IndexedEdit {
	parts, err := sqlstore.DecodeParts(s.Parts)
	if err != nil {
		return nil
	}
	return FromParts(s.Body, parts, s.Cwd)
}

// FromParts are the edits of body, whose parts are parts (with their
// ids) and whose working directory is cwd, as the index keeps them:
// what FromBody finds once the body is decoded, and what an import
// stores while its messages are still decoded.
func FromParts(body int64, parts []loom.Part, cwd string) []loom.IndexedEdit {
	var out []loom.IndexedEdit
	for n, c := range Extract(parts, cwd) {
		out = append(out, loom.IndexedEdit{Body: body, N: n, PartID: c.PartID, Tool: c.Tool, Op: c.Op,
			Path: c.Path, From: c.From, Lines: Hashes(c.Added())})
	}
	return out
}

// ChangeOf is edit e (read with its Parts) as Extract reads it, its
// text included; ok is false when the parts no longer hold it (they
// were rewritten). Its path is e's.
func ChangeOf(e *loom.FileEdit) (Change, bool) {
	cs, err := Changes(e.Parts)
	if err != nil {
		return Change{}, false
	}
	return Pick(e, cs)
}

// Changes are the changes a message's stored parts (a JSON array)
// make, as Extract reads them with no working directory: what Pick
// takes an edit of the message from. A message whose calls made
// several edits is read once for all of them.
func Changes(parts []byte) ([]Change, error) {
	ps, err := sqlstore.DecodeParts(parts)
	if err != nil {
		return nil, err
	}
	// Paths do not change which changes there are: relative ones stay
	// as they are without a directory.
	return Extract(ps, ""), nil
}

// Pick is edit e among cs, the changes of its message (Changes); ok
// is false when they no longer hold it. Its path is e's.
func Pick(e *loom.FileEdit, cs []Change) (Change, bool) {
	if e.N < len(cs) && cs[e.N].PartID == e.PartID {
		c := cs[e.N]
		c.Path, c.From = e.Path, e.From
		return c, true
	}
	return Change{}, false
}
