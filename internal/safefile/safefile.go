// Package safefile opens and reads the files an import is given without
// trusting what they are: a named pipe would block open(2) until a
// writer comes, a device such as /dev/zero never ends, and a file can be
// as large as the disk. Open refuses what is not a regular file without
// blocking and what is larger than a limit before anything is read;
// Reader bounds a stream that has no size (standard input) and stops
// when its context ends.
package safefile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrTooLarge is the error of a file or stream over its limit; the
// errors Open and Reader return wrap it with the sizes.
var ErrTooLarge = errors.New("too large")

// ErrNotRegular is the error of a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading, refusing at once (never blocking in
// open(2), which a named pipe would) what is not a regular file and a
// file larger than max bytes (no limit when max <= 0). The file
// information is that of the file opened.
func Open(path string, max int64) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if err := Check(fi, max); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// Check refuses fi when it is not a regular file or is larger than max
// bytes (no limit when max <= 0).
func Check(fi fs.FileInfo, max int64) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w (%s)", ErrNotRegular, Kind(fi.Mode()))
	}
	if max > 0 && fi.Size() > max {
		return TooLarge(fi.Size(), max)
	}
	return nil
}

// TooLarge is the error of size bytes over a limit of max bytes.
func TooLarge(size, max int64) error {
	return fmt.Errorf("%w: %s, over the limit of %s", ErrTooLarge, Size(size), Size(max))
}

// Kind names what kind of file a path is, as an error says it.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a file"
}

// Size is n bytes for a person: "512 bytes", "64 MB", "1.5 GB" (powers
// of 1,024, as the limits are).
func Size(n int64) string {
	switch {
	case n >= 1<<30:
		return trim(float64(n)/(1<<30)) + " GB"
	case n >= 1<<20:
		return trim(float64(n)/(1<<20)) + " MB"
	case n >= 1<<10:
		return trim(float64(n)/(1<<10)) + " KB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trim(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s
}

// Reader is r read at most max bytes (no limit when max <= 0): a read
// past the limit fails with an error wrapping ErrTooLarge, and every
// read after ctx ends fails with ctx's error. It does not interrupt a
// read already blocked in r.
type Reader struct {
	ctx  context.Context
	r    io.Reader
	max  int64
	read int64
}

// NewReader bounds r by max bytes and ctx.
func NewReader(ctx context.Context, r io.Reader, max int64) *Reader {
	return &Reader{ctx: ctx, r: r, max: max}
}

// Read reads from the underlying reader within the limit.
func (b *Reader) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if b.max > 0 {
		if b.read >= b.max {
			// At the limit: fine if the stream ends here.
			var one [1]byte
			n, err := b.r.Read(one[:])
			if n == 0 && err != nil {
				return 0, err
			}
			return 0, fmt.Errorf("%w: over the limit of %s", ErrTooLarge, Size(b.max))
		}
		if left := b.max - b.read; int64(len(p)) > left {
			p = p[:left]
		}
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

// Stdin checks what standard input is before it is read as an import:
// a regular file (redirected) or a pipe or socket (another program's
// output) is read; a terminal or device is refused, since /dev/zero
// never ends and nobody types an export. f nil (not a file) is read.
func Stdin(f *os.File, max int64) error {
	if f == nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return nil // not something stat knows; the read says what it is
	}
	m := fi.Mode()
	switch {
	case m.IsRegular():
		if max > 0 && fi.Size() > max {
			return TooLarge(fi.Size(), max)
		}
		return nil
	case m&(fs.ModeNamedPipe|fs.ModeSocket) != 0:
		return nil
	}
	return fmt.Errorf("%w (%s): give a file, or pipe one in", ErrNotRegular, Kind(m))
}

// WriteFile writes data to path as a whole or not at all: into a file
// beside it, renamed over it once written and synced, so that a reader
// never sees half of it and a crash leaves the old file.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return replace(path, data, perm, true)
}

// WriteCache writes data to path as WriteFile does, whole or not at all
// for every reader, but does not wait for the disk: after a crash the
// file may hold the old data, the new, or nothing whole. For a cache
// whose entries carry their own checksum, one written for each file of
// a directory (loom blame summary), where a sync a file would be most
// of the time.
func WriteCache(path string, data []byte, perm fs.FileMode) error {
	return replace(path, data, perm, false)
}

// replace writes data into a file beside path and renames it over
// path, synced first when sync is set.
func replace(path string, data []byte, perm fs.FileMode, sync bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil && sync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
