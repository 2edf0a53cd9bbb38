package importer

// Where segments start and end: the line starts, turn restarts and line
// counts of a big file, read a buffer at a time.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
)

// lineBoundary is the first offset at or after at, up to size, where a
// line of f starts (or size).
func lineBoundary(f io.ReaderAt, at, size int64) (int64, error) {
	if at <= 0 || at >= size {
		return min(max(at, 0), size), nil
	}
	buf := make([]byte, 64<<10)
	for off := at - 1; off < size; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return off + int64(i) + 1, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if n == 0 {
			break
		}
		off += int64(n)
	}
	return size, nil
}

// segmentEnd is where the segment that starts at from ends, and
// whether a turn starts there (clean): at the last turn that starts in
// its last maxOverlap bytes, else at the first that starts within
// maxOverlap after it, so that a segment holds whole turns; else, in a
// turn longer than that, at the first line after SegmentSize bytes.
func segmentEnd(f io.ReaderAt, tu turns, from, size int64) (int64, bool, error) {
	target := from + SegmentSize()
	if target >= size {
		return size, true, nil
	}
	// A turn that starts in the segment's first half ends it only when
	// none starts soon after it, so that no segment is small.
	half := from + SegmentSize()/2
	last, _, err := restarts(f, tu, max(half, target-maxOverlap), target, half, false)
	if err != nil || last > half {
		return last, true, err
	}
	first, _, err := restarts(f, tu, target, min(size, target+maxOverlap), from, true)
	if err != nil || first > from {
		return first, true, err
	}
	if size-target <= maxOverlap {
		return size, true, nil // the file ends within the turn
	}
	to, err := lineBoundary(f, target, size)
	return to, to >= size, err
}

// restartBefore is where the segment after [from, to) starts: the last
// line within maxOverlap before to, after from, that sg says starts a
// turn; to itself when there is none (to at a line's start), or the
// start of the line that holds to.
func restartBefore(f io.ReaderAt, tu turns, from, to int64) (int64, error) {
	best, lastStart, err := restarts(f, tu, max(from, to-maxOverlap), to, from, false)
	switch {
	case err != nil:
		return 0, err
	case best > from:
		return best, nil
	case lastStart > from:
		return lastStart, nil
	}
	return to, nil
}

// restarts looks at the lines that start in [lo, hi) of f, after from
// (a line's start): it returns the first (with first) or last of them
// that tu says starts a turn, -1 when none does, and the start of a
// line cut off at hi, -1 when hi is a line's start.
func restarts(f io.ReaderAt, tu turns, lo, hi, from int64, first bool) (found, cut int64, err error) {
	found, cut = -1, -1
	buf := make([]byte, hi-lo)
	if _, err := f.ReadAt(buf, lo); err != nil && !errors.Is(err, io.EOF) {
		return 0, 0, err
	}
	// Line starts in buf: lo itself only when it is one.
	start := 0
	if lo > from {
		prev := []byte{0}
		if _, err := f.ReadAt(prev, lo-1); err != nil {
			return 0, 0, err
		}
		if prev[0] != '\n' {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				return -1, -1, nil // one line longer than the window
			}
			start = i + 1
		}
	}
	starts := tu.scan()
	for start < len(buf) {
		end := bytes.IndexByte(buf[start:], '\n')
		if end < 0 {
			cut = lo + int64(start)
			break
		}
		// Every line goes to starts, the one at from too: a scanner
		// judges a line by those before it.
		if p := lo + int64(start); starts(bytes.TrimSpace(buf[start:start+end])) && p > from {
			found = p
			if first {
				break
			}
		}
		start += end + 1
	}
	return found, cut, nil
}

// countLines counts the lines that start in [from, to) of f.
func countLines(f io.ReaderAt, from, to int64) (int, error) {
	buf := make([]byte, 1<<20)
	n := 0
	for off := from; off < to; {
		got, err := f.ReadAt(buf[:min(int64(len(buf)), to-off)], off)
		n += bytes.Count(buf[:got], []byte{'\n'})
		off += int64(got)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, err
		}
		if got == 0 {
			break
		}
	}
	return n, nil
}

// FirstLine is the first line of f, trimmed, when a segment starting
// at from does not hold it, nil when from is the file's start: what the
// reader of a segment needs of the file's head (a Codex rollout's
// session_meta line, a Gemini CLI or pi session's header).
func FirstLine(ctx context.Context, f io.ReaderAt, from int64) ([]byte, error) {
	if from <= 0 {
		return nil, nil
	}
	var head []byte
	err := Lines(ctx, io.NewSectionReader(f, 0, from), func(_ int, line []byte) error {
		head = bytes.Clone(bytes.TrimSpace(line))
		return errHeadRead
	}, func(int) {})
	if err != nil && !errors.Is(err, errHeadRead) {
		return nil, err
	}
	return head, nil
}

// errHeadRead stops the reading of a file's head after its first line.
var errHeadRead = errors.New("head read")

// SectionOpener opens the main file of a segment as only its segment's
// bytes, and every other file whole, with open.
func SectionOpener(main string, seg Segment, open func(string) (io.ReadCloser, error)) func(string) (io.ReadCloser, error) {
	return func(name string) (io.ReadCloser, error) {
		if name != main {
			return open(name)
		}
		f, _, err := Open(name, 0)
		if err != nil {
			return nil, err
		}
		return &section{SectionReader: io.NewSectionReader(f, seg.From, seg.To-seg.From), f: f}, nil
	}
}

// section is a segment of an open file.
type section struct {
	*io.SectionReader
	f *os.File
}

func (s *section) Close() error { return s.f.Close() }

// ModTime is the file's modification time.
func (s *section) Stat() (os.FileInfo, error) { return s.f.Stat() }

// within reads f until ctx is done: the looks for a segment's end and
// for line starts go through whole files (a 64 GB line has none), and
// an interrupt must stop them.
type within struct {
	ctx context.Context
	f   io.ReaderAt
}

func (w within) ReadAt(p []byte, off int64) (int, error) {
	if err := w.ctx.Err(); err != nil {
		return 0, err
	}
	return w.f.ReadAt(p, off)
}
