package importer

import (
	"context"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/loomhq/loom"
)

// Reading ahead: while the bundles of a root are written to the store
// one after the other, in their order, the files of the bundles that
// follow are read and parsed on every core (GOMAXPROCS workers). What
// is written, and in which order, is what one core reading in turn
// writes: a bundle's reading is a function of its files alone, and it
// is used only when its files are still as the worker found them when
// the writer comes to the bundle (then the writer reads them itself, as
// it did before). Everything else of an import — the source locks, the
// look-ups, the repairs, big files read a segment at a time — stays
// with the writer.
//
// Memory is bounded by what is read ahead and not written yet: at most
// aheadBytes of their files at once, a bundle counting as aheadFloor at
// least (so at most aheadBytes/aheadFloor bundles); a bundle whose files
// are bigger than SegmentSize is left to the writer, as are bundles read
// a segment at a time. The window is wide so that the workers go on
// reading while the writer commits a batch (a second or more of the
// store's work): with a window of 2×workers bundles they stopped after
// four small files, and the writer then waited for them.
//
// A worker also compresses the originals of the files it read
// (keptAhead), the chunks the writer would make of them when the store
// holds nothing of them yet, so that the writer only writes them.

// aheadBytes bounds the size of the files read ahead and not yet
// written.
const aheadBytes = 64 << 20

// aheadFloor is the least a bundle counts for in aheadBytes: what its
// reading holds besides its files' bytes.
const aheadFloor = 256 << 10

// parsed is a bundle read ahead: its files, their sizes and times
// before the reading, and what the reading returned.
type parsed struct {
	files  []string
	stats  []loom.ImportedFile
	res    *Result
	err    error
	weight int64
	// kept are the files' originals compressed from their start, by
	// path; a file missing here is kept by the writer as before.
	kept map[string]*keptAhead
}

// keptAhead is one file's original as keepFile cuts and compresses it
// from its start, read when the file had size and modTime.
type keptAhead struct {
	size    int64
	modTime time.Time
	chunks  []loom.OriginalChunk
}

// ahead reads the bundles of one root ahead of the writer.
type ahead struct {
	slots  []chan *parsed
	next   int
	sem    *semaphore.Weighted
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// aheadJob is one bundle for a worker.
type aheadJob struct {
	i      int
	files  []string
	stats  []loom.ImportedFile
	weight int64
}

// readAhead starts reading bundles ahead of the writer, which takes each
// in turn (take) and stops it (stop) when done; nil (reading in turn)
// with one worker (Workers) or for one bundle. known are the records of
// the files; the workers read a copy taken once a run of the tool,
// never the writer's.
func (im *Importer) readAhead(ctx context.Context, f Format, bundles []Bundle, known map[string]loom.ImportedFile) *ahead {
	workers := im.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers < 2 || len(bundles) < 2 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	a := &ahead{slots: make([]chan *parsed, len(bundles)), sem: semaphore.NewWeighted(aheadBytes), cancel: cancel}
	for i := range a.slots {
		a.slots[i] = make(chan *parsed, 1)
	}
	if im.knownBefore == nil {
		im.knownBefore = cloneKnown(known) // known is the writer's, and changes as it writes
	}
	known = im.knownBefore
	// Originals are compressed ahead unless the run keeps none, or the
	// format keeps a copy it makes rather than its files (Filtered).
	_, filtered := f.(Filtered)
	keep := im.keeper() != nil && !filtered
	jobs := make(chan aheadJob)
	for range workers {
		a.wg.Go(func() {
			for j := range jobs {
				res, err := read(ctx, f, Bundle{Files: j.files})
				p := &parsed{files: j.files, stats: j.stats, res: res, err: err, weight: j.weight}
				if err == nil && keep {
					p.kept = keepAhead(ctx, j.stats, known)
				}
				a.slots[j.i] <- p
			}
		})
	}
	a.wg.Go(func() {
		defer close(jobs)
		for i, b := range bundles {
			files, stats, size, ok := im.worthReading(f, b, known)
			if !ok {
				a.slots[i] <- nil
				continue
			}
			w := min(max(size, aheadFloor), aheadBytes)
			if err := a.sem.Acquire(ctx, w); err != nil {
				return
			}
			select {
			case jobs <- aheadJob{i: i, files: files, stats: stats, weight: w}:
			case <-ctx.Done():
				a.sem.Release(w)
				return
			}
		}
	})
	return a
}

// worthReading is statBundle and the choices of bundle made ahead, with
// nothing reported: ok when b is one the writer will read whole.
func (im *Importer) worthReading(f Format, b Bundle, known map[string]loom.ImportedFile) (files []string, stats []loom.ImportedFile, size int64, ok bool) {
	unchanged := true
	var newest time.Time
	for _, p := range b.Files {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			if p == b.Name() {
				return nil, nil, 0, false
			}
			continue
		}
		rec := loom.ImportedFile{Path: p, Size: fi.Size(), ModTime: fi.ModTime().UTC(), Bundle: b.Name()}
		if k, ok := known[p]; !ok || k.Size != rec.Size || !k.ModTime.Equal(rec.ModTime) || k.Bundle != rec.Bundle {
			unchanged = false
		}
		newest = later(newest, rec.ModTime)
		files = append(files, p)
		stats = append(stats, rec)
		size += rec.Size
	}
	switch {
	case len(files) == 0, unchanged && !im.Rescan, !im.Since.IsZero() && newest.Before(im.Since), size > SegmentSize():
		return nil, nil, 0, false
	}
	if _, seg := segmentable(f, files, stats, b); seg {
		return nil, nil, 0, false
	}
	return files, stats, size, true
}

// keepAhead compresses the files of stats from their start, as keepFile
// does when the store holds nothing of them: those not recorded in
// known, or recorded bigger than they are (written again). A file
// recorded as it is or smaller (grown since) is kept by the writer,
// its new end only, as is one it could not read whole.
func keepAhead(ctx context.Context, stats []loom.ImportedFile, known map[string]loom.ImportedFile) map[string]*keptAhead {
	out := make(map[string]*keptAhead, len(stats))
	for _, rec := range stats {
		if k, ok := known[rec.Path]; ok && k.Size <= rec.Size {
			continue
		}
		k := &keptAhead{size: rec.Size, modTime: rec.ModTime}
		kf, err := keepFile(ctx, func(c loom.OriginalChunk) error {
			k.chunks = append(k.chunks, c)
			return nil
		}, loom.OriginalFile{}, rec, rec.Path, "", nil)
		if err != nil || kf.Size != rec.Size {
			continue
		}
		out[rec.Path] = k
	}
	return out
}

// keptFor is what a worker compressed of the file of rec, nil when it
// did not, or read it at another size or time.
func (p *parsed) keptFor(rec loom.ImportedFile) *keptAhead {
	if p == nil {
		return nil
	}
	k := p.kept[rec.Path]
	if k == nil || k.size != rec.Size || !k.modTime.Equal(rec.ModTime) {
		return nil
	}
	return k
}

// take is the reading of the writer's next bundle, nil when it was not
// read ahead. The writer takes every bundle, in order.
func (a *ahead) take(ctx context.Context) *parsed {
	if a == nil || a.next >= len(a.slots) {
		return nil
	}
	i := a.next
	a.next++
	select {
	case p := <-a.slots[i]:
		if p != nil {
			a.sem.Release(p.weight)
		}
		return p
	case <-ctx.Done():
		return nil
	}
}

// stop stops the workers and waits for them.
func (a *ahead) stop() {
	if a == nil {
		return
	}
	a.cancel()
	a.wg.Wait()
}

// matches says whether p was read from files as they are in stats:
// the same files, each of the same size and time.
func (p *parsed) matches(files []string, stats []loom.ImportedFile) bool {
	if p == nil || len(p.files) != len(files) || len(stats) != len(files) {
		return false
	}
	for i := range files {
		if p.files[i] != files[i] || p.stats[i].Path != stats[i].Path || p.stats[i].Size != stats[i].Size || !p.stats[i].ModTime.Equal(stats[i].ModTime) {
			return false
		}
	}
	return true
}

func cloneKnown(known map[string]loom.ImportedFile) map[string]loom.ImportedFile {
	out := make(map[string]loom.ImportedFile, len(known))
	for k, v := range known {
		out[k] = v
	}
	return out
}
