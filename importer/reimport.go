package importer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loomhq/loom"
)

// Reimport reads the kept originals (originals.go) again with today's
// readers: what a reader fixed since the import finds in them reaches
// the sessions, also once the agent has deleted its files. A session
// whose stored messages the new reading still continues (the same
// messages, in order) gets what changed in them and what the reading
// has beyond them, as an import of a grown file does; one it no longer
// continues (the reader now finds a message it dropped, or reads lines
// into other messages) is made again from the reading under its own id,
// with its sub-agent sessions. Either way the result is what a fresh
// import of the original files makes, and what was done to the session
// in loom since stays: its title, and the forks made of it (a fork
// keeps the conversation as it was when it was made).

// KeptBundle is one bundle of kept originals: the files an import read
// together, its main file first.
type KeptBundle struct {
	Tool   string
	Bundle string
	Files  []loom.OriginalFile
}

// KeptBundles returns the bundles whose originals k keeps for userID: of
// tool (every tool's when empty), and, when sessionIDs names any, only
// those that hold one of them.
func KeptBundles(ctx context.Context, k loom.OriginalsKeeper, userID, tool string, sessionIDs []string) ([]KeptBundle, error) {
	files, err := k.OriginalFiles(ctx, userID, tool)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range sessionIDs {
		want[id] = true
	}
	type key struct{ tool, bundle string }
	by := map[key]*KeptBundle{}
	var order []key
	for _, f := range files {
		kk := key{f.Tool, f.Bundle}
		b := by[kk]
		if b == nil {
			b = &KeptBundle{Tool: f.Tool, Bundle: f.Bundle}
			by[kk] = b
			order = append(order, kk)
		}
		b.Files = append(b.Files, f)
	}
	var out []KeptBundle
	for _, kk := range order {
		b := by[kk]
		held := len(want) == 0
		for _, f := range b.Files {
			held = held || want[f.SessionID]
		}
		if !held {
			continue
		}
		slices.SortFunc(b.Files, func(x, y loom.OriginalFile) int {
			if (x.Path == b.Bundle) != (y.Path == b.Bundle) {
				if x.Path == b.Bundle {
					return -1
				}
				return 1
			}
			return cmp.Compare(x.Path, y.Path)
		})
		out = append(out, *b)
	}
	return out, nil
}

// Reimport reads bundles, kept originals of f's tool, again with f, and
// brings their sessions in the store to what a fresh import of them
// makes. It records no files read and keeps no originals: the source is
// the store itself.
func (im *Importer) Reimport(ctx context.Context, f Format, bundles []KeptBundle) (*ToolReport, error) {
	tr := &ToolReport{Tool: f.Tool(), Skipped: map[string]int{}, Problems: []Problem{}}
	im.reimporting, im.NoOriginals = true, true
	defer func() {
		im.reimporting = false
		im.pending.release(ctx)
		im.pending = batch{}
	}()
	for _, b := range bundles {
		if err := im.reimportBundle(ctx, im.Store, f, b, tr); err != nil {
			return tr, inFiles([]string{b.Bundle}, err)
		}
	}
	return tr, nil
}

func (im *Importer) reimportBundle(ctx context.Context, k loom.OriginalsKeeper, f Format, b KeptBundle, tr *ToolReport) error {
	dir, err := os.MkdirTemp("", "loom-reimport-")
	if err != nil {
		return fmt.Errorf("reimport: %w", err)
	}
	defer os.RemoveAll(dir)
	back := map[string]string{}
	var files []string
	for _, of := range b.Files {
		p, err := restoreOriginal(ctx, k, dir, of)
		if err != nil {
			return err
		}
		back[p] = of.Path
		files = append(files, p)
	}
	if ex, ok := compressed(f, files[0]); ok {
		// Expanded to a file read in segments when big, whole else.
		sub := filepath.Join(dir, ".expanded")
		if err := os.Mkdir(sub, 0o700); err != nil {
			return fmt.Errorf("reimport: %w", err)
		}
		plain, err := expandTo(ctx, ex, files[0], sub)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			tr.failed(Problem{File: b.Bundle, Reason: err.Error()})
			return nil
		}
		back[plain] = back[files[0]]
		files[0] = plain
	}
	// What the reading names by path names the agent's file, as a fresh
	// import of it would.
	unmap := func(p string) string {
		if o, ok := back[p]; ok {
			return o
		}
		if rest, ok := strings.CutPrefix(p, dir); ok {
			return rest
		}
		return p
	}
	var titles map[string]string
	if sg, size, ok := reimportSegmenter(f, files); ok {
		if titles, err = im.reimportSegments(ctx, f, sg, files, size, unmap, tr); err != nil {
			return err
		}
	} else {
		res, err := read(ctx, f, Bundle{Files: files})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			tr.failed(Problem{File: b.Bundle, Reason: err.Error()})
			return nil
		}
		for _, s := range res.Sessions {
			s.Path = unmap(s.Path)
		}
		for i := range res.Problems {
			res.Problems[i].File = unmap(res.Problems[i].File)
		}
		if titles, err = im.remakeDiverged(ctx, f, res, tr); err != nil {
			return err
		}
		tr.read(len(files), res)
		if err := im.write(ctx, f, res, false, tr); err != nil {
			return err
		}
		if err := im.flush(ctx); err != nil {
			return err
		}
	}
	// A session made again keeps the title it had in loom.
	for id, title := range titles {
		x, err := im.Store.Session(ctx, id)
		if err != nil || x.Title == title {
			continue
		}
		t := title
		if _, err := im.Store.UpdateSession(ctx, id, loom.SessionUpdate{Title: &t}); err != nil {
			return err
		}
	}
	return nil
}

// remakeDiverged removes the stored copies of the sessions of res whose
// stored messages the reading no longer continues, so that write makes
// them again under their ids (im.remade), and returns their titles by
// id.
func (im *Importer) remakeDiverged(ctx context.Context, f Format, res *Result, tr *ToolReport) (map[string]string, error) {
	titles := map[string]string{}
	gone := map[string]bool{}
	if err := im.leaveInline(ctx, f.Tool(), res); err != nil {
		return nil, err
	}
	for _, s := range res.Sessions {
		key := f.Tool() + ":" + s.SourceID
		x, err := im.find(ctx, key)
		if err != nil {
			return nil, err
		}
		if x == nil || gone[x.ID] {
			continue
		}
		stored, err := im.Store.Messages(ctx, x.ID, loom.MessageQuery{})
		if err != nil {
			return nil, err
		}
		s.keepStoredIDs(stored, s.Messages)
		if continues(stored, s.Messages) {
			continue
		}
		if err := im.remake(ctx, x.ID, titles, gone, tr); err != nil {
			return nil, err
		}
	}
	return titles, nil
}

// remake removes session id, and the sessions made of it, so that
// write makes them again under their ids (im.remade); their titles go
// to titles by id, their ids to gone.
func (im *Importer) remake(ctx context.Context, id string, titles map[string]string, gone map[string]bool, tr *ToolReport) error {
	removed, err := im.Store.Delete(ctx, id, loom.DeleteOptions{Purge: true})
	if err != nil {
		return err
	}
	for _, r := range removed {
		gone[r.ID] = true
		if r.Key == "" {
			continue
		}
		if im.remade == nil {
			im.remade = map[string]string{}
		}
		im.remade[r.Key] = r.ID
		titles[r.ID] = r.Title
		tr.SessionsRepaired++
		tr.MessagesRemoved += r.MessageCount
	}
	return nil
}

// reimportSegmenter is f as a Segmenter when the main file of the
// restored bundle files is read in segments, with that file's size.
func reimportSegmenter(f Format, files []string) (Segmenter, int64, bool) {
	sg, ok := f.(Segmenter)
	if !ok || len(files) == 0 || !segmentsFile(sg, files[0]) {
		return nil, 0, false
	}
	fi, err := os.Stat(files[0])
	if err != nil || fi.Size() <= SegmentSize() {
		return nil, 0, false
	}
	return sg, fi.Size(), true
}

// reimportSegments reimports a bundle whose main file, restored from
// its originals, is read in segments (segment.go). Its stored sessions
// get what each segment has that they lack; when a segment no longer
// continues them (a reader that now finds a message it dropped), or
// the reading ends before they do, they are made again from the file,
// a segment at a time. It returns the titles of the sessions made
// again, by id.
func (im *Importer) reimportSegments(ctx context.Context, f Format, sg Segmenter, files []string, size int64, unmap func(string) string, tr *ToolReport) (map[string]string, error) {
	titles, gone := map[string]string{}, map[string]bool{}
	for again := false; ; again = true {
		im.remakeID = ""
		st, err := im.readSegments(ctx, f, sg, files, 0, 1, size, false, unmap, func(int64, *Result) error { return nil }, tr)
		if err == nil {
			err = im.readWhole(ctx, st)
		}
		if !errors.Is(err, errRemake) || again || im.remakeID == "" {
			return titles, err
		}
		// What the readings changed so far goes with the copy.
		im.pending.release(ctx)
		im.pending = batch{}
		if err := im.remake(ctx, im.remakeID, titles, gone, tr); err != nil {
			return nil, err
		}
	}
}

// readWhole checks that the readings of st reached the end of each
// stored session they continued: errRemake when one holds more.
func (im *Importer) readWhole(ctx context.Context, st *segState) error {
	for id, cur := range st.cursor {
		x, err := im.Store.Session(ctx, id)
		if loom.ErrorCode(err) == loom.ENOTFOUND {
			continue
		}
		if err != nil {
			return err
		}
		if int64(x.MessageCount) > cur {
			im.remakeID = id
			return errRemake
		}
	}
	return nil
}

// continues reports whether msgs, a source's reading, holds stored, its
// stored copy's messages, first and in order.
func continues(stored, msgs []*loom.Message) bool {
	if len(stored) > len(msgs) {
		return false
	}
	for i, m := range stored {
		if msgs[i].ID != m.ID {
			return false
		}
	}
	return true
}

// restoreOriginal writes the kept original of of under dir, at its own
// path below dir, with its modification time, a chunk at a time, and
// returns where.
func restoreOriginal(ctx context.Context, k loom.OriginalsKeeper, dir string, of loom.OriginalFile) (string, error) {
	p := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(filepath.ToSlash(of.Path), filepath.VolumeName(of.Path))))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("reimport: %w", err)
	}
	out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return "", fmt.Errorf("reimport: %w", err)
	}
	err = k.OriginalChunks(ctx, of.UserID, of.Path, func(c loom.OriginalChunk) error {
		b, err := DecompressOriginal(c.Data)
		if err != nil {
			return fmt.Errorf("%s at %d: %w", of.Path, c.Offset, err)
		}
		_, err = out.Write(b)
		return err
	})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("reimport: %w", err)
	}
	if !of.ModTime.IsZero() {
		if err := os.Chtimes(p, of.ModTime, of.ModTime); err != nil {
			return "", fmt.Errorf("reimport: %w", err)
		}
	}
	return p, nil
}
