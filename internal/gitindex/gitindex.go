// Package gitindex reads git's index file (.git/index) directly: the
// paths it lists and the stat information and object it keeps of each,
// what `git ls-files -z --cached` prints, without starting git. It reads
// versions 2, 3 and 4 of the format with SHA-1 object names; an index it
// cannot answer for as git would (a split index, a sparse index, another
// object format, a version it does not know, a damaged file) is
// ErrUnsupported, and the caller asks git.
package gitindex

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// ErrUnsupported is an index this package does not read as git would:
// ask git instead.
var ErrUnsupported = errors.New("gitindex: index not readable here")

// Entry is one path of the index, at one stage.
type Entry struct {
	// Path is the path relative to the work tree's top, with slashes.
	Path string
	// Mode is git's mode of the entry (0100644, 0100755, 0120000,
	// 0160000).
	Mode uint32
	// Size is the file's size as the index recorded it (its low 32
	// bits).
	Size uint32
	// MtimeSec and MtimeNsec are the file's modification time as the
	// index recorded it.
	MtimeSec, MtimeNsec uint32
	// ID is the object's name (SHA-1).
	ID [hashLen]byte
	// Stage is 0, or 1–3 for a path in conflict.
	Stage int
}

// OID is the entry's object's name in hexadecimal.
func (e Entry) OID() string { return hex.EncodeToString(e.ID[:]) }

// Read reads the index file at path. A file that does not exist is an
// empty index (a repository with nothing added), as git has it.
func Read(path string) ([]Entry, error) {
	es, _, err := load(path)
	return slices.Clone(es), err
}

// Paths are the paths of the index file at path in its order, a path in
// conflict once for each of its stages: `git ls-files -z`'s list.
func Paths(path string) ([]string, error) {
	es, _, err := load(path)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Path
	}
	return out, nil
}

const (
	hashLen  = 20 // SHA-1
	fixedLen = 40 + hashLen + 2
)

// Parse reads the bytes of an index file.
func Parse(b []byte) ([]Entry, error) {
	es, _, err := parseExt(b)
	return es, err
}

// loaded is the index file a process read last, by the file's identity
// and times: a first blame reads it twice (its probe, the tracked
// files), and reads and checks it once.
var loaded struct {
	sync.Mutex
	path string
	id   [3]int64
	es   []Entry
	ext  map[string][]byte
}

// load reads and parses the index file at path, or gives the entries
// read before when the file is the same (the same inode, size and
// time: git replaces its index by renaming a new file over it). No
// file is an empty index.
func load(path string) ([]Entry, map[string][]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("git index: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("git index: %w", err)
	}
	id := [3]int64{fi.Size(), fi.ModTime().UnixNano(), inode(fi)}
	loaded.Lock()
	defer loaded.Unlock()
	if loaded.path == path && loaded.id == id && id[2] != 0 {
		return loaded.es, loaded.ext, nil
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, fmt.Errorf("git index: %w", err)
	}
	es, ext, err := parseExt(b)
	if err != nil {
		return nil, nil, err
	}
	loaded.path, loaded.id, loaded.es, loaded.ext = path, id, es, ext
	return es, ext, nil
}

// parseExt is Parse with the optional extensions, by signature.
func parseExt(b []byte) ([]Entry, map[string][]byte, error) {
	if len(b) < 12+hashLen || string(b[:4]) != "DIRC" {
		return nil, nil, fmt.Errorf("%w: no index header", ErrUnsupported)
	}
	end := len(b) - hashLen // the checksum at the end
	// The checksum git wrote (all zeros under index.skipHash): a file of
	// another object format, whose checksum is longer, fails it.
	if sum := b[end:]; !bytes.Equal(sum, make([]byte, hashLen)) {
		if h := sha1.Sum(b[:end]); !bytes.Equal(h[:], sum) {
			return nil, nil, fmt.Errorf("%w: checksum", ErrUnsupported)
		}
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return nil, nil, fmt.Errorf("%w: version %d", ErrUnsupported, version)
	}
	n := int(binary.BigEndian.Uint32(b[8:12]))
	if n > (end-12)/fixedLen+1 {
		return nil, nil, fmt.Errorf("%w: %d entries in %d bytes", ErrUnsupported, n, len(b))
	}
	es := make([]Entry, 0, n)
	off := 12
	var prev []byte // v4: the name before, whose end the next one replaces
	for range n {
		if off+fixedLen > end {
			return nil, nil, fmt.Errorf("%w: entry past the end", ErrUnsupported)
		}
		start := off
		e := Entry{
			MtimeSec:  binary.BigEndian.Uint32(b[off+8:]),
			MtimeNsec: binary.BigEndian.Uint32(b[off+12:]),
			Mode:      binary.BigEndian.Uint32(b[off+24:]),
			Size:      binary.BigEndian.Uint32(b[off+36:]),
		}
		copy(e.ID[:], b[off+40:off+40+hashLen])
		flags := binary.BigEndian.Uint16(b[off+40+hashLen:])
		e.Stage = int(flags>>12) & 3
		off += fixedLen
		if flags&0x4000 != 0 { // extended flags
			if version < 3 || off+2 > end {
				return nil, nil, fmt.Errorf("%w: extended flags in version %d", ErrUnsupported, version)
			}
			off += 2
		}
		if e.Mode&0o170000 == 0o040000 {
			// A sparse index's directory: git lists the files under it,
			// which this index does not hold.
			return nil, nil, fmt.Errorf("%w: sparse directory entry", ErrUnsupported)
		}
		if version == 4 {
			strip, k := varint(b[off:end])
			if k == 0 || strip > len(prev) {
				return nil, nil, fmt.Errorf("%w: bad path compression", ErrUnsupported)
			}
			off += k
			i := bytes.IndexByte(b[off:end], 0)
			if i < 0 {
				return nil, nil, fmt.Errorf("%w: unterminated path", ErrUnsupported)
			}
			name := make([]byte, 0, len(prev)-strip+i)
			name = append(append(name, prev[:len(prev)-strip]...), b[off:off+i]...)
			prev = name
			e.Path = string(name)
			off += i + 1
		} else {
			i := bytes.IndexByte(b[off:end], 0)
			if i < 0 {
				return nil, nil, fmt.Errorf("%w: unterminated path", ErrUnsupported)
			}
			e.Path = string(b[off : off+i])
			// Padded with 1 to 8 NULs to a multiple of 8 bytes.
			off = start + (off-start+i+8)&^7
		}
		es = append(es, e)
	}
	// Extensions: an optional one (its signature in capitals) can be
	// passed over; a split index ("link") holds its entries elsewhere,
	// and any other one git requires understood is not read here.
	ext := map[string][]byte{}
	for off+8 <= end {
		sig := b[off : off+4]
		size := int(binary.BigEndian.Uint32(b[off+4:]))
		if sig[0] < 'A' || sig[0] > 'Z' {
			return nil, nil, fmt.Errorf("%w: extension %q", ErrUnsupported, sig)
		}
		if size < 0 || off+8+size > end {
			return nil, nil, fmt.Errorf("%w: extension past the end", ErrUnsupported)
		}
		ext[string(sig)] = b[off+8 : off+8+size]
		off += 8 + size
	}
	if off != end {
		return nil, nil, fmt.Errorf("%w: %d bytes left after the entries", ErrUnsupported, end-off)
	}
	return es, ext, nil
}

// varint reads git's offset encoding of a number (index v4's count of
// bytes to strip): the number and the bytes read, 0 when b ends first.
func varint(b []byte) (int, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v := int(c & 127)
	k := 1
	for c&128 != 0 {
		if k >= len(b) || k > 8 {
			return 0, 0
		}
		c = b[k]
		k++
		v = ((v + 1) << 7) | int(c&127)
	}
	return v, k
}

// Locate is the index file of the work tree whose top-level directory
// is top, found as git finds it: top/.git a directory, or a file naming
// the git directory (a linked work tree, a submodule). ok is false where
// git's environment names another (GIT_DIR, GIT_INDEX_FILE and the
// like) or .git is neither: ask git then.
func Locate(top string) (string, bool) {
	for _, v := range []string{"GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_COMMON_DIR"} {
		if os.Getenv(v) != "" {
			return "", false
		}
	}
	dot := filepath.Join(top, ".git")
	fi, err := os.Lstat(dot)
	switch {
	case err != nil:
		return "", false
	case fi.IsDir():
		return filepath.Join(dot, "index"), true
	case !fi.Mode().IsRegular():
		return "", false
	}
	b, err := os.ReadFile(dot)
	if err != nil {
		return "", false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	dir, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "gitdir: ")
	if !ok || dir == "" {
		return "", false
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(top, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", false
	}
	return filepath.Join(dir, "index"), true
}
