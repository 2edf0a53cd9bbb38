package importer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"
)

// MaxLine bounds one line of a session file. Lines longer than this (a
// pasted image, a runaway tool output) are reported as problems and
// skipped without being held in memory whole.
const MaxLine = 32 << 20

// Lines calls fn with each line of r (without its newline) and its
// 1-based number. A line longer than MaxLine is reported through tooLong
// and skipped; a final line without a newline is passed like any other.
// The slice fn gets is valid only until fn returns. Lines stops when ctx
// is cancelled, also in the middle of one endless line, or fn returns an
// error, and returns that error.
func Lines(ctx context.Context, r io.Reader, fn func(n int, line []byte) error, tooLong func(n int)) error {
	return LinesFrom(ctx, r, 1, fn, tooLong)
}

// LinesFrom is Lines numbering r's first line first: a segment of a
// file (Segment) is read with the numbers its lines have in the file.
func LinesFrom(ctx context.Context, r io.Reader, first int, fn func(n int, line []byte) error, tooLong func(n int)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for n := max(first, 1); ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		buf = buf[:0]
		over := false
		for chunks := 1; ; chunks++ {
			if chunks%64 == 0 {
				// One endless line (a device, a runaway writer) is 4 MB
				// between two looks at ctx.
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			chunk, err := br.ReadSlice('\n')
			if !over {
				if len(buf)+len(chunk) > MaxLine {
					over, buf = true, buf[:0]
				} else {
					buf = append(buf, chunk...)
				}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err == io.EOF {
				if len(buf) == 0 && !over {
					return nil
				}
				if over {
					tooLong(n)
					return nil
				}
				return fn(n, trimEOL(buf))
			}
			if err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
			break
		}
		if over {
			tooLong(n)
			continue
		}
		if err := fn(n, trimEOL(buf)); err != nil {
			return err
		}
	}
}

func trimEOL(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}

// DecodeLine decodes line n of file path, a JSON value, into v, and
// reports whether it did: a blank line is passed over, and one that is
// not JSON is a problem of r.
func (r *Result) DecodeLine(path string, n int, line []byte, v any) bool {
	if len(bytes.TrimSpace(line)) == 0 {
		return false
	}
	if err := json.Unmarshal(line, v); err != nil {
		r.Problemf(path, n, "not JSON: "+Excerpt(err.Error()))
		return false
	}
	r.CheckUTF8(path, n, line)
	return true
}

// CheckUTF8 makes a line that decoded as JSON but holds bytes that are
// not UTF-8 one problem of r: JSON decoding replaced them by U+FFFD, so
// the record is kept with that mark where they stood, and the user is
// told (the same bytes in a format of plain text are a problem too).
func (r *Result) CheckUTF8(path string, n int, line []byte) {
	if !utf8.Valid(line) {
		r.Problemf(path, n, NotUTF8)
	}
}

// NotUTF8 is the reason of a line holding bytes that are not UTF-8.
const NotUTF8 = "bytes that are not UTF-8, kept as U+FFFD (\ufffd)"

// SessionLines calls fn with each line of r that is not blank, trimmed
// of surrounding space, and its number, as Lines reads them; a line over
// MaxLine is a problem of res at path; a file of no line, or every line
// of which was a problem, is one line (LinesRead). It returns how many
// lines fn was given, and the error that stopped the reading, if any.
func SessionLines(ctx context.Context, path string, r io.Reader, res *Result, fn func(n int, line []byte)) (int, error) {
	return SessionLinesFrom(ctx, path, r, 1, res, fn)
}

// SessionLinesFrom is SessionLines numbering r's first line first, as
// LinesFrom: a segment of a file read with its lines' numbers in it.
func SessionLinesFrom(ctx context.Context, path string, r io.Reader, first int, res *Result, fn func(n int, line []byte)) (int, error) {
	lines, had := 0, len(res.Problems)
	err := LinesFrom(ctx, r, first, func(n int, b []byte) error {
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			return nil
		}
		lines++
		fn(n, b)
		return nil
	}, res.TooLong(path))
	if err == nil && first == 1 {
		res.LinesRead(path, had, lines)
	}
	return lines, err
}

// LinesRead applies the rule for bad input (badinput.go) to the file at
// path, a file of lines read whole, of which lines were not blank, its
// problems those of r from had on: a file of no line holds nothing yet,
// its one line says so; one every line of which was a problem could
// not be read, one line for it. SessionLines calls it; a reader that
// reads its lines otherwise (keeping their indentation) calls it when
// it has read them.
func (r *Result) LinesRead(path string, had, lines int) {
	switch {
	case lines == 0:
		r.Empty(path)
	case len(r.Problems)-had == lines && allOf(r.Problems[had:], path):
		p := unreadable(path, r.Problems[had:])
		r.Problems = r.Problems[:had]
		r.Unreadablef(p.File, 0, p.Reason)
	}
}

// allOf says whether every problem of ps is about file.
func allOf(ps []Problem, file string) bool {
	for _, p := range ps {
		if p.File != file {
			return false
		}
	}
	return true
}

// LostBefore says whether a line of path before line n could not be
// read (a problem of r names it). A record linked to its parent by id
// whose parent is not found then hangs on the last readable record, in
// its place in the conversation, with no line of its own: its parent is
// most likely that line, which has its line already (docs/import.md,
// "One damaged record").
func (r *Result) LostBefore(path string, n int) bool {
	return r.LostLine(path, n) > 0
}

// LostLine is the last line of path before line n that could not be
// read (a problem of r names it; bytes that are not UTF-8 are no such
// problem, their record is kept), 0 when there is none. The lines are
// indexed as problems are added, so that a hostile file of many lost
// lines and many records that ask costs no more than a search each.
func (r *Result) LostLine(path string, n int) int {
	ix := r.lost
	if ix == nil || len(r.Problems) < ix.seen {
		ix = &lostIndex{lines: map[string][]int{}}
		r.lost = ix
	}
	for _, p := range r.Problems[ix.seen:] {
		if p.Line > 0 && p.Reason != NotUTF8 {
			ls := ix.lines[p.File]
			at, _ := slices.BinarySearch(ls, p.Line)
			ix.lines[p.File] = slices.Insert(ls, at, p.Line)
		}
	}
	ix.seen = len(r.Problems)
	ls := ix.lines[path]
	at, _ := slices.BinarySearch(ls, n)
	if at == 0 {
		return 0
	}
	return ls[at-1]
}

// lostIndex is LostLine's index: the lines of each file named by the
// first seen problems of a Result, in order.
type lostIndex struct {
	seen  int
	lines map[string][]int
}
