package importer

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	watched := map[string]bool{}
	addDirs := func() {
		if w == nil {
			return
		}
		for _, t := range targets {
			for _, root := range t.Roots {
				im.watchTree(w, root, watched)
			}
		}
	}
	run := func() (settling bool) {
		addDirs()
		rep, err := im.Run(ctx, targets)
		if err != nil && ctx.Err() == nil {
			if rep == nil {
				rep = &Report{}
			}
			rep.Tools = append(rep.Tools, &ToolReport{Tool: "watch", Problems: []Problem{{Reason: err.Error()}}, ProblemCount: 1})
		}
		if rep != nil && ctx.Err() == nil {
			report(rep)
			for _, t := range rep.Tools {
				if t.Settling > 0 {
					settling = true
				}
			}
		}
		return settling
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		events, errs = w.Events, w.Errors
	}
	rescan := time.NewTicker(opts.Rescan)
	defer rescan.Stop()
	// pending fires once changes have gone quiet, or a settling reply
	// is due to be read again.
	pending := time.NewTimer(0)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					im.watchTree(w, ev.Name, watched)
				}
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
			if run() {
				pending.Reset(im.settle() + opts.Quiet)
			}
		}
	}
}

// watchTree asks w to notify changes in root (a directory, or a file's
// directory) and every directory below it not watched yet.
func (im *Importer) watchTree(w *fsnotify.Watcher, root string, watched map[string]bool) {
	fi, err := os.Stat(root)
	if err != nil {
		return
	}
	if !fi.IsDir() {
		root = filepath.Dir(root)
	}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if watched[p] {
			return nil
		}
		if len(watched) >= maxWatched {
			return filepath.SkipAll
		}
		if err := w.Add(p); err != nil {
			im.logf("watch %s: %v", p, err)
			return nil
		}
		watched[p] = true
		return nil
	})
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
