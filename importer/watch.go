package importer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchOptions tune Watch; zero values take the defaults.
type WatchOptions struct {
	// Quiet is how long Watch waits after a change for more before it
	// imports (a tool writes a reply in several lines). Default 100 ms.
	Quiet time.Duration
	// Rescan is how often Watch imports everything again whatever it
	// heard, for file systems whose notifications are missed (network
	// mounts, a directory made between two walks). Default 30 s.
	Rescan time.Duration
}

// retryFirst is how long Watch waits to run again after a run that
// failed; each failure in a row doubles it, up to the rescan interval.
const retryFirst = 200 * time.Millisecond

// maxWatched bounds the directories Watch asks to be notified of; past
// it, the periodic rescan alone finds changes.
const maxWatched = 4096

// Watch imports targets once, then again each time their files change,
// until ctx ends. It learns of changes from file system notifications
// (fsnotify) on every directory under the targets' roots, and imports
// everything again every opts.Rescan in case a notification was missed.
// A file rewritten, truncated, rotated or deleted is handled as a run
// handles it: the loom copy keeps what it has. report gets the report
// of every run; an error of one run is reported to it too (in the
// report's problems) and does not stop watching, except a cancelled
// ctx.
func (im *Importer) Watch(ctx context.Context, targets []Target, opts WatchOptions, report func(*Report)) error {
	if opts.Quiet <= 0 {
		opts.Quiet = 100 * time.Millisecond
	}
	if opts.Rescan <= 0 {
		opts.Rescan = 30 * time.Second
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		im.logf("file notifications unavailable, rescanning every %s: %v", opts.Rescan, err)
		w = nil
	} else {
		defer w.Close()
	}
	wt := &watchTree{im: im, w: w, watched: map[string]bool{}, waiting: map[string]bool{}}
	for _, t := range targets {
		wt.roots = append(wt.roots, t.Roots...)
	}
	// retry is how long after a run that failed the next one starts
	// (another importer of the same files won a race, the store was
	// busy): soon, then less and less often, up to the rescan.
	var retry time.Duration
	// pending fires once changes have gone quiet.
	pending := time.NewTimer(0)
	run := func() {
		wt.addRoots()
		rep, err := im.Run(ctx, targets)
		if err == nil || ctx.Err() != nil {
			retry = 0
		} else {
			if rep == nil {
				rep = &Report{}
			}
			p := Problem{Reason: err.Error()}
			if fe := (*FileError)(nil); errors.As(err, &fe) {
				p = Problem{File: fe.File, Reason: fe.Err.Error()}
			}
			rep.Tools = append(rep.Tools, &ToolReport{Tool: "watch", Problems: []Problem{p}, ProblemCount: 1})
			retry = min(max(2*retry, retryFirst), opts.Rescan)
			pending.Reset(retry)
		}
		if rep != nil && ctx.Err() == nil {
			report(rep)
		}
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		events, errs = w.Events, w.Errors
	}
	rescan := time.NewTicker(opts.Rescan)
	defer rescan.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if !wt.event(ev) {
				continue
			}
			pending.Reset(opts.Quiet)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			im.logf("file notifications: %v", err)
		case <-rescan.C:
			pending.Reset(0)
		case <-pending.C:
			run()
		}
	}
}

// watchTree is what Watch asks to be notified of: every directory under
// the roots, and, for a root that does not exist yet (a tool installed
// after loom), the nearest directory above it that does, so that the
// root's making is noticed at once rather than at the next rescan.
type watchTree struct {
	im    *Importer
	w     *fsnotify.Watcher
	roots []string
	// watched are directories under a root; waiting are directories
	// above a missing root, whose other changes are not the tools'.
	watched, waiting map[string]bool
}

// addRoots watches every root not watched yet, or what is above it.
func (wt *watchTree) addRoots() {
	if wt.w == nil {
		return
	}
	for _, root := range wt.roots {
		fi, err := os.Stat(root)
		switch {
		case err == nil && !fi.IsDir():
			wt.add(filepath.Dir(root))
		case err == nil:
			wt.add(root)
		default:
			wt.waitFor(root)
		}
	}
}

// add watches dir and every directory below it not watched yet,
// following symbolic links as imports do.
func (wt *watchTree) add(dir string) {
	WalkDir(context.Background(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || wt.watched[p] {
			return nil
		}
		if HeavyDirs[d.Name()] && !wt.isRoot(p) {
			// Dependencies and builds in a project (an Aider root):
			// no session file is written there.
			return filepath.SkipDir
		}
		if len(wt.watched) >= maxWatched {
			return filepath.SkipAll
		}
		if err := wt.w.Add(p); err != nil {
			wt.im.logf("watch %s: %v", p, err)
			return nil
		}
		wt.watched[p] = true
		return nil
	})
}

// isRoot reports whether p is one of the roots.
func (wt *watchTree) isRoot(p string) bool {
	for _, r := range wt.roots {
		if r == p {
			return true
		}
	}
	return false
}

// waitFor watches the nearest existing directory above missing root.
func (wt *watchTree) waitFor(root string) {
	for dir := filepath.Dir(root); ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			if !wt.waiting[dir] && !wt.watched[dir] && wt.w.Add(dir) == nil {
				wt.waiting[dir] = true
			}
			return
		}
		if filepath.Dir(dir) == dir {
			return
		}
	}
}

// event takes in one notification and reports whether it may concern
// the tools' files (and so calls for an import).
func (wt *watchTree) event(ev fsnotify.Event) bool {
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// A directory removed stops being watched; made again, it is
		// watched again.
		delete(wt.watched, ev.Name)
		delete(wt.waiting, ev.Name)
	}
	if wt.waiting[filepath.Dir(ev.Name)] && !wt.watched[filepath.Dir(ev.Name)] {
		// Above a missing root: only the way to a root matters.
		if !wt.onTheWay(ev.Name) {
			return false
		}
		wt.addRoots()
		return true
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
			wt.add(ev.Name)
		}
	}
	return true
}

// onTheWay reports whether p is a root or a directory above one.
func (wt *watchTree) onTheWay(p string) bool {
	for _, root := range wt.roots {
		if root == p || strings.HasPrefix(root, p+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func (im *Importer) logf(format string, args ...any) {
	if im.Logger != nil {
		im.Logger.Warn("import: " + fmt.Sprintf(format, args...))
	}
}

// Changed reports whether a run imported or found anything to tell.
func (r *Report) Changed() bool {
	for _, t := range r.Tools {
		if t.SessionsNew+t.SessionsGrown+t.MessagesAdded+t.ToolsUpdated+t.ProblemCount > 0 {
			return true
		}
	}
	return false
}
