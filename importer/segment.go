package importer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/loomhq/loom"
)

// Big files, a segment at a time: a session file of lines bigger than
// SegmentSize (a Claude Code or Codex session of many gigabytes) is
// never read whole. Its reader reads it a segment of about SegmentSize
// bytes at a time, each starting at a turn (Segmenter.Restart) a little
// before the previous one ended, so that a reply or a tool's result
// that the previous segment cut off is read whole again; what a segment
// holds is written, with the file recorded as read up to the segment's
// end and its original bytes up to there kept, in one transaction. A
// run killed between two segments has lost nothing: the next one reads
// the file again from the turn before where the record ends, and finds
// the messages it holds by their ids. Memory therefore is bounded by
// the segment's size, whatever the file's; a file that grows is read
// from where it was read up to, not from its start.

// Segment is the part of a bundle's main file a Segmenter reads: the
// bytes [From, To), which start at a line's start and end at a line's
// end (or the file's); Line is the number of the line at From, 1 for the
// file's first.
type Segment struct {
	From, To int64
	Line     int
}

// Segmenter is a Format whose main files are lines that can be read a
// segment at a time.
type Segmenter interface {
	// ReadSegment reads bundle b with its main file cut to seg, its
	// lines numbered as in the whole file (so that ids made of line
	// numbers are the same); the bundle's other files are read whole.
	// What a reader needs of the file's head to read any part of it (a
	// Codex rollout's session_meta line) it reads too.
	ReadSegment(ctx context.Context, b Bundle, seg Segment) (*Result, error)
	// Restart reports whether line, one of the main file's, starts a
	// turn: a reading that starts there makes the same messages of what
	// follows as one of the whole file.
	Restart(line []byte) bool
}

// TurnScanner is a Segmenter some of whose main files tell where a turn
// starts by the lines before a line too, not by the line alone: a
// Claude Code sub-agent's transcript is one long turn of replies and
// tool results, where a reply starts a turn only once the calls of the
// reply before it have their results.
type TurnScanner interface {
	// Turns returns, for the main file name, a function that is given
	// the file's lines in order, from any line on, and reports for each
	// whether it starts a turn (as Restart does), judging by it and the
	// lines it was given before; nil when Restart alone tells.
	Turns(name string) func(line []byte) bool
}

// turns tells the lines of one main file that start a turn.
type turns struct {
	sg   Segmenter
	name string
}

// scan is a function given the file's lines in order from some line
// on, which reports whether each starts a turn.
func (t turns) scan() func(line []byte) bool {
	if ts, ok := t.sg.(TurnScanner); ok {
		if fn := ts.Turns(t.name); fn != nil {
			return fn
		}
	}
	return t.sg.Restart
}

// segmentsOf is a Segmenter that reads only some of its main files in
// segments as they are (Gemini CLI's JSONL recordings; its big
// one-document ones are expanded to lines first, expand.go).
type segmentsOf interface {
	SegmentsOf(name string) bool
}

// segmentsFile reports whether sg reads the main file name in segments:
// not a compressed one, and only one it says it can.
func segmentsFile(sg Segmenter, name string) bool {
	if strings.HasSuffix(name, ".zst") {
		return false
	}
	so, ok := sg.(segmentsOf)
	return !ok || so.SegmentsOf(name)
}

// BigAlone splits the files a reader would bundle with a session's
// file (its sub-agents'): those read with it, and a bundle of its own
// for each one bigger than a segment, which as its bundle's main file
// is read a segment at a time, in bounded memory, followed from where
// it was read up to as it grows, and its originals kept as they grow,
// instead of read whole with every reading of the session's file.
func BigAlone(files []string) (small []string, alone []Bundle) {
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Size() > SegmentSize() {
			alone = append(alone, Bundle{Files: []string{f}})
			continue
		}
		small = append(small, f)
	}
	return small, alone
}

// DefaultSegmentSize is SegmentSize unless $LOOM_IMPORT_SEGMENT (a
// number of bytes, at least 64 KB) says otherwise.
const DefaultSegmentSize = 16 << 20

// maxOverlap bounds how far from SegmentSize a segment's end is looked
// for at a turn's start, and how far before the end of a file's part
// read before the reading of its rest starts (at the turn that part
// ended in): a turn longer than this is cut at a line, and a tool's
// result after the cut whose call is before it leaves the call without
// its result.
const maxOverlap = 8 << 20

// SegmentSize is the size of the segments a big file is read in, and
// the size over which a file is read in segments.
var SegmentSize = sync.OnceValue(func() int64 {
	if v, err := strconv.ParseInt(os.Getenv("LOOM_IMPORT_SEGMENT"), 10, 64); err == nil && v >= 64<<10 {
		return v
	}
	return DefaultSegmentSize
})

// segmentable reports whether the bundle of files, stats, is read in
// segments with f: its main file is plain lines bigger than a segment,
// and f can.
func segmentable(f Format, files []string, stats []loom.ImportedFile, b Bundle) (Segmenter, bool) {
	sg, ok := f.(Segmenter)
	if !ok || len(files) == 0 || files[0] != b.Name() || stats[0].Path != b.Name() {
		return nil, false
	}
	if _, ok := compressed(sg, b.Name()); ok {
		// How big it is expanded is known only once it is: a small
		// file may expand to hundreds of megabytes (segmented expands
		// it, and has a small one read whole).
		return sg, true
	}
	if !segmentsFile(sg, b.Name()) || stats[0].Size <= SegmentSize() {
		return nil, false
	}
	return sg, true
}

// segState is what the segments of one file share while it is read.
type segState struct {
	// main is the path the sessions read from the main file name.
	main string
	// fromStart says the reading began at the file's start: the stored
	// copies of its sessions are compared from their first message.
	fromStart bool
	// cursor is, by loom session id, the seq of the last stored message
	// the readings so far reached.
	cursor map[string]int64
	// seen are the sessions counted in the report already: true as
	// new or grown, false as unchanged (a later segment may grow it).
	seen map[string]bool
	// mainSeen says a segment held the main file's own session.
	mainSeen bool
}

// errRemake says a reimport's reading of a big file no longer continues
// the stored copy of its session: the copy is made again.
var errRemake = errors.New("the reading no longer continues the stored session")

// readSegments reads the bundle of files, whose main file is size bytes,
// a segment at a time from offset from (line line on), and writes what
// each holds; after each, done is called with the segment's end, to add
// the file's records and originals to the batch, which is then written.
func (im *Importer) readSegments(ctx context.Context, f Format, sg Segmenter, files []string, from int64, line int, size int64,
	waitForParents bool, unmap func(string) string, done func(to int64, res *Result) error, tr *ToolReport) (*segState, error) {
	st := &segState{main: unmap(files[0]), fromStart: from == 0, cursor: map[string]int64{}, seen: map[string]bool{}}
	return st, im.readSegmentsOf(ctx, st, f, sg, files, from, line, size, waitForParents, unmap, done, tr)
}

func (im *Importer) readSegmentsOf(ctx context.Context, st *segState, f Format, sg Segmenter, files []string, from int64, line int, size int64,
	waitForParents bool, unmap func(string) string, done func(to int64, res *Result) error, tr *ToolReport) error {
	fh, _, err := Open(files[0], 0)
	if err != nil {
		return err
	}
	defer fh.Close()
	tu := turns{sg, files[0]}
	prev := im.seg
	im.seg = st
	defer func() { im.seg = prev }()
	first := true
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		to, clean, err := segmentEnd(within{ctx, fh}, tu, from, size)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("reading %s: %w", files[0], err)
		}
		res, err := readSegment(ctx, f, sg, Bundle{Files: files}, Segment{From: from, To: to, Line: line})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			tr.failed(Problem{File: unmap(files[0]), Reason: err.Error()})
			return nil
		}
		for _, s := range res.Sessions {
			s.Path = unmap(s.Path)
		}
		for i := range res.Problems {
			res.Problems[i].File = unmap(res.Problems[i].File)
		}
		im.keepForParent(st, res)
		if err := im.write(ctx, f, res, waitForParents && first, tr); err != nil {
			return err
		}
		n := 0
		if first {
			n = len(files)
		}
		tr.read(n, res)
		if err := done(to, res); err != nil {
			return err
		}
		if err := im.flush(ctx); err != nil {
			return err
		}
		// The calls counted so far are in the store now: a session of
		// millions of calls is not held as a map of them.
		im.counted = nil
		if to >= size {
			return nil
		}
		next := to
		if !clean {
			// Cut inside a turn longer than a segment: the next one
			// starts at that turn when it can.
			if next, err = restartBefore(within{ctx, fh}, tu, from, to); err != nil {
				return fmt.Errorf("reading %s: %w", files[0], err)
			}
		}
		lines, err := countLines(within{ctx, fh}, from, next)
		if err != nil {
			return fmt.Errorf("reading %s: %w", files[0], err)
		}
		from, line, first = next, line+lines, false
	}
}

// keepForParent leaves out of res, until a segment has held the main
// file's session, the sessions of the bundle's other files (its
// sub-agents'), so that they are written once their parent is, and
// linked to it.
func (im *Importer) keepForParent(st *segState, res *Result) {
	for _, s := range res.Sessions {
		if s.Path == st.main && (s.Kind == "" || s.Kind == loom.KindMain) {
			st.mainSeen = true
		}
	}
	if st.mainSeen {
		return
	}
	kept := res.Sessions[:0]
	for _, s := range res.Sessions {
		if s.Path == st.main {
			kept = append(kept, s)
		}
	}
	res.Sessions = kept
}

// readSegment is read for a segment.
func readSegment(ctx context.Context, f Format, sg Segmenter, b Bundle, seg Segment) (*Result, error) {
	return recovered(f, func() (*Result, error) { return sg.ReadSegment(ctx, b, seg) })
}

// segmented imports a bundle whose main file is read in segments: from
// where its record says it was read up to (the turn before), else from
// its start.
func (im *Importer) segmented(ctx context.Context, f Format, sg Segmenter, files []string, stats []loom.ImportedFile,
	known map[string]loom.ImportedFile, bundled map[string][]string, waitForParents bool, tr *ToolReport) error {
	main := stats[0]
	keep := func(s string) string { return s }
	from, line, size := int64(0), 1, main.Size
	ex, packed := compressed(sg, files[0])
	if packed {
		// Expanded whole, then read from its start: a compressed file
		// does not grow, and an offset in it is not one in its plain
		// bytes. Its records and originals are written with its last
		// segment; a run stopped before reads it again, and finds the
		// messages stored by their ids.
		dir, err := os.MkdirTemp("", "loom-expand-")
		if err != nil {
			return fmt.Errorf("expanding %s: %w", files[0], err)
		}
		defer os.RemoveAll(dir)
		plain, err := expandTo(ctx, ex, files[0], dir)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			tr.failed(Problem{File: files[0], Reason: err.Error()})
			return nil
		}
		fi, err := os.Stat(plain)
		if err != nil {
			return fmt.Errorf("expanding %s: %w", files[0], err)
		}
		if fi.Size() <= SegmentSize() {
			return errReadWhole
		}
		packedName := files[0]
		files = append([]string{plain}, files[1:]...)
		size = fi.Size()
		keep = func(s string) string {
			if s == plain {
				return packedName
			}
			return s
		}
	} else {
		var err error
		if from, line, err = im.resumeAt(ctx, sg, f.Tool(), main, known[main.Path]); err != nil {
			return err
		}
	}
	last := false
	_, err := im.readSegments(ctx, f, sg, files, from, line, size, waitForParents, keep, func(to int64, res *Result) error {
		if im.DryRun || (packed && to < size) {
			return nil
		}
		recs := make([]loom.ImportedFile, len(stats))
		copy(recs, stats)
		// Up to the segment's end only: a run stopped after it goes on
		// from there.
		if !packed {
			recs[0].Size = to
		}
		if len(res.Sessions) > 0 && (len(res.Sessions) == 1 || onlyOneMain(res.Sessions)) {
			m := res.Sessions[0]
			recs[0].SourceID, recs[0].SessionID = m.SourceID, tr.ids[m.SourceID]
		}
		if err := im.keepSegmentOriginals(ctx, f.Tool(), recs, packed); err != nil {
			return err
		}
		im.pending.w.Files = append(im.pending.w.Files, recs...)
		if to >= size {
			last = true
			im.holdCurrent()
		}
		for _, r := range recs {
			known[r.Path] = r
		}
		return nil
	}, tr)
	if err != nil || !last {
		return err
	}
	paths := make([]string, len(stats))
	for i, s := range stats {
		paths[i] = s.Path
	}
	bundled[main.Path] = paths
	return nil
}

// errReadWhole says a compressed file, once expanded, is no bigger than
// a segment: it is read whole, as any small file (with a rescan's
// repairs).
var errReadWhole = errors.New("small enough to be read whole")

// keepSegmentOriginals keeps the originals of a big file's bundle up to
// what recs say was read. Those of a plain file are the bytes its
// segment added, written with it; a compressed file's are kept with its
// last segment, all of it, so they are written as they grow, as a file
// read whole's are, never held whole.
func (im *Importer) keepSegmentOriginals(ctx context.Context, tool string, recs []loom.ImportedFile, packed bool) error {
	if packed {
		seg := im.seg
		im.seg = nil
		defer func() { im.seg = seg }()
	}
	return im.keepOriginals(ctx, tool, recs, recs[0].SessionID)
}

// resumeAt is where a big file recorded as rec (read up to rec.Size)
// is read from now that it is cur: the start of the last turn before
// rec.Size, and that line's number; its start when it is not recorded,
// shrank, or (its original kept) no longer holds what was read of it.
func (im *Importer) resumeAt(ctx context.Context, sg Segmenter, tool string, cur, rec loom.ImportedFile) (int64, int, error) {
	if rec.Path == "" || rec.Size <= 0 || rec.Size > cur.Size || rec.Bundle != cur.Bundle || im.Rescan {
		return 0, 1, nil
	}
	fh, _, err := Open(cur.Path, 0)
	if err != nil {
		return 0, 0, err
	}
	defer fh.Close()
	if k := im.keeper(); k != nil {
		if err := im.loadKept(ctx, k, tool); err != nil {
			return 0, 0, err
		}
		if kf, ok := im.kept[cur.Path]; ok && kf.Size > 0 && kf.Size <= cur.Size {
			same, err := tailIs(fh, kf.Size, kf.Tail)
			if err != nil {
				return 0, 0, err
			}
			if !same {
				return 0, 1, nil // written again since: read from the start
			}
		}
	}
	at, err := restartBefore(within{ctx, fh}, turns{sg, cur.Path}, 0, rec.Size)
	if err != nil {
		return 0, 0, err
	}
	n, err := countLines(within{ctx, fh}, 0, at)
	if err != nil {
		return 0, 0, err
	}
	return at, n + 1, nil
}
