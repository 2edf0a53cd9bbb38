package importer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/safefile"
)

// Importer imports other agents' sessions into a store, incrementally:
// a file it has read is recorded with its size and modification time,
// and read again only when they change.
type Importer struct {
	// Store is written to, with the services its engine provides: the
	// counted calls and the source locks an import requires, the
	// originals it keeps when the engine keeps them.
	Store  loom.Engine
	UserID string
	// DryRun reads and reports without writing anything.
	DryRun bool
	// Since leaves out bundles none of whose files changed since then.
	Since time.Time
	// Rescan reads every file again, whatever its record says, and
	// repairs what importers that raced on it made (repair.go).
	Rescan bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Price is the cost of a message's usage; no cost when nil.
	Price func(provider, model string, u loom.Usage) (float64, bool)
	// Project is the project of a working directory; when nil, the
	// directory itself is the project root.
	Project func(dir string) loom.Project
	Logger  *slog.Logger
	// NoOriginals keeps no original bytes of the files read (a reimport
	// reads the kept ones).
	NoOriginals bool
	// Workers read and parse files ahead of their writing (ahead.go):
	// GOMAXPROCS when 0; 1 reads each file in turn with the writes.
	Workers int

	projects map[string]loom.Project
	pending  batch
	// current is the import lock of the bundle being read, until its
	// batch holds what it read.
	current loom.Lease
	// remade are the ids of sessions that a repair removed to make
	// again from their files, by key (repair.go).
	remade map[string]string
	// counted are the sessions that count model calls, by call, as the
	// store and the batches written so far keep them (calls.go).
	counted map[string]string
	// kept is what the store keeps of the original files of tool
	// keptTool, by path (originals.go).
	kept     map[string]loom.OriginalFile
	keptTool string
	// seg is the big file being read a segment at a time (segment.go).
	seg *segState
	// remakeID is the session a reimport's reading of a big file no
	// longer continues (errRemake).
	remakeID string
	// titles are the titles of sessions named by other bundles read
	// in the run (Result.Titles), by key.
	titles map[string]string
	// reimporting says the run reads kept originals again
	// (reimport.go): every stored message is compared with the source,
	// not only the newest, and a title set in loom is kept.
	reimporting bool
	// ahead is the bundle being imported as it was read ahead
	// (ahead.go), nil when it was not.
	ahead *parsed
	// knownBefore are the records of the tool's files as the readers
	// ahead see them: a copy of known taken once a run of the tool.
	knownBefore map[string]loom.ImportedFile
}

// Target is one tool to import, with where to look.
type Target struct {
	Format Format
	// Roots are the files or directories to read; Explicit says the user
	// named them, so that a missing one is an error rather than a tool
	// that is not installed.
	Roots    []string
	Explicit bool
}

// Run imports every target once and reports what it did.
func (im *Importer) Run(ctx context.Context, targets []Target) (*Report, error) {
	start := im.now()
	rep := &Report{DryRun: im.DryRun}
	// A run that stops early leaves nothing behind for the next one:
	// what it had not written yet is read again then, and its source
	// locks are freed.
	defer func() {
		im.pending.release(ctx)
		im.pending = batch{}
	}()
	for _, t := range targets {
		tr, err := im.runTool(ctx, t)
		if tr != nil {
			rep.Tools = append(rep.Tools, tr)
		}
		if err != nil {
			rep.done(start, im.now())
			return rep, err
		}
	}
	im.mergeIndex(ctx, rep)
	rep.done(start, im.now())
	return rep, nil
}

// mergeIndex merges the store's search index after a run that added
// many messages (see MergeAfterImport), so that the appends that
// follow do not pay for it.
func (im *Importer) mergeIndex(ctx context.Context, rep *Report) {
	if im.DryRun {
		return
	}
	added := 0
	for _, t := range rep.Tools {
		added += t.MessagesAdded
	}
	if err := MergeAfterImport(ctx, im.Store, added); err != nil {
		slog.Warn("import", "err", err)
	}
}

func (im *Importer) now() time.Time {
	if im.Now != nil {
		return im.Now()
	}
	return time.Now()
}

func (im *Importer) runTool(ctx context.Context, t Target) (*ToolReport, error) {
	start := im.now()
	tool := t.Format.Tool()
	tr := &ToolReport{Tool: tool, Roots: t.Roots, Skipped: map[string]int{}, Problems: []Problem{}}
	defer func() {
		tr.Elapsed = im.now().Sub(start)
		tr.DurationMS = tr.Elapsed.Milliseconds()
	}()
	recs, err := im.Store.ImportedFiles(ctx, im.UserID, tool)
	if err != nil {
		return tr, err
	}
	im.kept = nil // read again with the records: other importers keep too
	im.knownBefore = nil
	known := make(map[string]loom.ImportedFile, len(recs))
	bundled := map[string][]string{}
	for _, r := range recs {
		known[r.Path] = r
		bundled[r.Bundle] = append(bundled[r.Bundle], r.Path)
	}
	var later []Bundle
	for _, root := range t.Roots {
		// A root or part of one that cannot be read is a problem; the
		// other roots and tools are still imported (see roots.go).
		skip, p := checkRoot(root, t.Explicit)
		if p != nil {
			tr.failed(*p)
			continue
		}
		if skip {
			continue
		}
		tr.RootsFound++
		bundles, err := t.Format.Bundles(ctx, root)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return tr, cerr
			}
			var u *Unreadable
			if !errors.As(err, &u) {
				tr.failed(PathProblem(root, err))
				continue
			}
			for _, p := range u.Problems {
				tr.failed(p)
			}
		}
		if len(bundles) == 0 && t.Explicit && err == nil {
			// One file named that is not the tool's: read or refused,
			// never passed over in silence.
			if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
				tr.failed(Problem{File: root, Reason: "not a session file of " + tool})
			}
		}
		if err := im.bundles(ctx, t.Format, bundles, known, bundled, tr, &later); err != nil {
			return tr, err
		}
	}
	if err := im.flush(ctx); err != nil {
		return tr, err
	}
	// Bundles whose parents were not in yet: their parents were read
	// meanwhile, or are nowhere (then they are imported on their own).
	for _, b := range later {
		if err := im.bundle(ctx, t.Format, b, known, bundled, false, tr); err != nil {
			return tr, inFiles([]string{b.Name()}, err)
		}
	}
	return tr, im.flush(ctx)
}

// bundles imports the bundles of one root, in their order, their files
// read ahead on every core (ahead.go); those whose parents are not in
// yet are added to later.
func (im *Importer) bundles(ctx context.Context, f Format, bundles []Bundle, known map[string]loom.ImportedFile, bundled map[string][]string, tr *ToolReport, later *[]Bundle) error {
	a := im.readAhead(ctx, f, bundles, known)
	defer a.stop()
	defer func() { im.ahead = nil }()
	for _, b := range bundles {
		if err := ctx.Err(); err != nil {
			return err
		}
		im.ahead = a.take(ctx)
		err := im.bundle(ctx, f, b, known, bundled, true, tr)
		im.ahead = nil
		if errors.Is(err, errParentLater) {
			*later = append(*later, b)
			continue
		}
		if err != nil {
			return inFiles([]string{b.Name()}, err)
		}
	}
	return nil
}

// bundle imports one bundle unless its files are as recorded.
func (im *Importer) bundle(ctx context.Context, f Format, b Bundle, known map[string]loom.ImportedFile, bundled map[string][]string, waitForParents bool, tr *ToolReport) error {
	files, stats, unchanged, newest, ok := im.statBundle(f, b, known, tr)
	if !ok || len(stats) == 0 {
		return nil
	}
	if unchanged && !im.Rescan {
		tr.FilesUnchanged += len(stats)
		return nil
	}
	if !im.Since.IsZero() && newest.Before(im.Since) {
		return nil
	}
	waited, err := im.lockSource(ctx, b.Name())
	if err != nil {
		return err
	}
	// The bundle's lock is held until the batch that holds what it read
	// is written, whatever batches are written meanwhile; one that
	// writes nothing is released at once.
	defer im.releaseCurrent(ctx)
	im.pending.files = append(im.pending.files, b.Name())
	if waited {
		// Another importer had the file: what it recorded and kept is
		// newer than known.
		im.kept = nil
		if stats, unchanged, err = im.recheck(ctx, f.Tool(), stats, known); err != nil {
			return err
		}
		if unchanged && !im.Rescan {
			tr.FilesUnchanged += len(stats)
			return nil
		}
	}
	if sg, ok := segmentable(f, files, stats, b); ok {
		if err := im.segmented(ctx, f, sg, files, stats, known, bundled, waitForParents, tr); !errors.Is(err, errReadWhole) {
			return err
		}
	}
	res, err := im.readBundle(ctx, f, b, files, stats, tr)
	if err != nil || res == nil {
		return err
	}
	if im.Rescan {
		if err := im.repair(ctx, f, res, stats, tr); err != nil {
			return err
		}
	}
	err = im.write(ctx, f, res, waitForParents, tr)
	if errors.Is(err, errParentLater) {
		return err
	}
	tr.read(len(stats), res)
	if err != nil {
		return err
	}
	if im.DryRun {
		return nil
	}
	return im.recordBundle(ctx, f, b, res, stats, known, bundled, tr)
}

// statBundle takes the size and time of each file b lists: files are the
// ones to read, stats their records. Unchanged when every file listed is
// as recorded. A file recorded for the bundle that it no longer lists
// (deleted, or, as in old stores, a marker file read beside the
// sessions) adds nothing to read again. ok is false when b's own file is
// not a regular file (a problem; nothing is read).
func (im *Importer) statBundle(f Format, b Bundle, known map[string]loom.ImportedFile, tr *ToolReport) (files []string, stats []loom.ImportedFile, unchanged bool, newest time.Time, ok bool) {
	stats = make([]loom.ImportedFile, 0, len(b.Files))
	files = make([]string, 0, len(b.Files))
	unchanged = true
	for _, p := range b.Files {
		fi, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // gone since it was listed
			}
			tr.failed(Problem{File: p, Reason: err.Error()})
			continue
		}
		if !fi.Mode().IsRegular() {
			// A FIFO would block the read until something writes to it,
			// a device (/dev/zero) never ends: only files are sessions.
			tr.failed(Problem{File: p, Reason: "not a regular file (" + safefile.Kind(fi.Mode()) + "); only session files are read"})
			if p == b.Name() {
				return nil, nil, false, time.Time{}, false
			}
			continue
		}
		files = append(files, p)
		rec := loom.ImportedFile{UserID: im.UserID, Path: p, Tool: f.Tool(), Bundle: b.Name(), Size: fi.Size(), ModTime: fi.ModTime().UTC()}
		if k, ok := known[p]; !ok || k.Size != rec.Size || !k.ModTime.Equal(rec.ModTime) || k.Bundle != rec.Bundle {
			unchanged = false
		}
		newest = later(newest, rec.ModTime)
		stats = append(stats, rec)
	}
	return files, stats, unchanged, newest, true
}

// readBundle reads files, b's, by the rule for bad input (badinput.go):
// a file that stays empty holds nothing yet, one line and recorded; one
// from which nothing could be read is one line, and fails (then the
// result is nil).
func (im *Importer) readBundle(ctx context.Context, f Format, b Bundle, files []string, stats []loom.ImportedFile, tr *ToolReport) (*Result, error) {
	var res *Result
	var err error
	if p := im.ahead; p.matches(files, stats) {
		res, err = p.res, p.err
	} else {
		res, err = read(ctx, f, Bundle{Files: files})
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	empty := files[0] == b.Name() && stats[0].Size <= maxBlank && isEmpty(b.Name())
	switch {
	case (err != nil || len(res.Sessions) == 0) && empty:
		res = &Result{Problems: []Problem{{File: b.Name(), Reason: emptyReason}}}
	case err != nil:
		tr.failed(Problem{File: b.Name(), Reason: err.Error()})
		return nil, nil
	case len(res.Sessions) == 0 && len(res.Problems) > 0:
		tr.failed(unreadable(b.Name(), res.Problems))
		return nil, nil
	}
	return res, nil
}

// recordBundle records b's files as imported, with the session they
// hold when it is one (a main one and its sub-agents), in the batch
// being written.
func (im *Importer) recordBundle(ctx context.Context, f Format, b Bundle, res *Result, stats []loom.ImportedFile, known map[string]loom.ImportedFile, bundled map[string][]string, tr *ToolReport) error {
	if len(res.Sessions) == 1 || (len(res.Sessions) > 0 && onlyOneMain(res.Sessions)) {
		main := res.Sessions[0]
		stats[0].SourceID = main.SourceID
		stats[0].SessionID = tr.ids[main.SourceID]
	}
	if err := im.keepOriginals(ctx, f.Tool(), stats, stats[0].SessionID); err != nil {
		return err
	}
	im.pending.w.Files = append(im.pending.w.Files, stats...)
	im.holdCurrent()
	if im.pending.full() {
		if err := im.flush(ctx); err != nil {
			return err
		}
	}
	for _, s := range stats {
		known[s.Path] = s
	}
	paths := make([]string, len(stats))
	for i, s := range stats {
		paths[i] = s.Path
	}
	bundled[b.Name()] = paths
	return nil
}

// recheck compares stats, the bundle's files as they were before its
// lock was taken, with the records another importer of them has written
// since, which it adds to known; and takes the files' sizes and times
// again, for the records of this import. unchanged says the files are as
// recorded now.
func (im *Importer) recheck(ctx context.Context, tool string, stats []loom.ImportedFile, known map[string]loom.ImportedFile) (_ []loom.ImportedFile, unchanged bool, err error) {
	recs, err := im.Store.ImportedFiles(ctx, im.UserID, tool)
	if err != nil {
		return nil, false, err
	}
	for _, r := range recs {
		known[r.Path] = r
	}
	unchanged = true
	out := make([]loom.ImportedFile, 0, len(stats))
	for _, rec := range stats {
		if fi, err := os.Stat(rec.Path); err == nil && fi.Mode().IsRegular() {
			rec.Size, rec.ModTime = fi.Size(), fi.ModTime().UTC()
		}
		if k, ok := known[rec.Path]; !ok || k.Size != rec.Size || !k.ModTime.Equal(rec.ModTime) || k.Bundle != rec.Bundle {
			unchanged = false
		}
		out = append(out, rec)
	}
	return out, unchanged, nil
}

func onlyOneMain(ss []*Session) bool {
	n := 0
	for _, s := range ss {
		if s.Kind == "" || s.Kind == loom.KindMain {
			n++
		}
	}
	return n == 1 && (ss[0].Kind == "" || ss[0].Kind == loom.KindMain)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// maxBlank bounds the files isEmpty looks into.
const maxBlank = 4 << 10

// isEmpty says whether the file at path is there and holds nothing but
// white space (0 bytes, or a line break a program wrote before
// anything else).
func isEmpty(path string) bool {
	data, err := ReadSmall(path, maxBlank+1)
	return err == nil && len(data) <= maxBlank && len(bytes.TrimSpace(data)) == 0
}

// read reads a bundle with f. A reader that fails on a hostile file in
// a way its tests missed costs that bundle, reported as a problem, and
// never the rest of the import.
func read(ctx context.Context, f Format, b Bundle) (res *Result, err error) {
	return recovered(f, func() (*Result, error) { return f.Read(ctx, b) })
}

// recovered is what fn, a reading by f, returns, or an error when it
// panics.
func recovered(f Format, fn func() (*Result, error)) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("%s reader failed on this file (%v); please report it", f.Tool(), r)
		}
	}()
	return fn()
}
