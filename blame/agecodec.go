package blame

import (
	"bytes"
	bin "encoding/binary"
	"errors"
	"hash/crc32"
	"time"
)

// encodeAges is e as an entry's file: the magic line, then varints and
// strings (each its length and bytes): the version, flags, repository,
// path, commit and blob; the commits the lines come from (id, time,
// boundary); the files they were in; each line's commit, file and line
// number there; and last the CRC-32C of all before it.
func encodeAges(e *ageEntry) []byte {
	var b []byte
	str := func(s string) { b = bin.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	b = append(b, ageMagic...)
	b = bin.AppendUvarint(b, ageVersion)
	for _, s := range []string{e.Flags, e.Repo, e.Path, e.Commit, e.Blob} {
		str(s)
	}
	commits, paths := map[string]int{}, map[string]int{}
	var cs []*blamed
	var ps []string
	for i := range e.Lines {
		l := &e.Lines[i]
		if _, ok := commits[l.Commit]; !ok {
			commits[l.Commit] = len(cs)
			cs = append(cs, l)
		}
		if _, ok := paths[l.Path]; !ok {
			paths[l.Path] = len(ps)
			ps = append(ps, l.Path)
		}
	}
	b = bin.AppendUvarint(b, uint64(len(cs)))
	for _, l := range cs {
		str(l.Commit)
		b = bin.AppendVarint(b, l.Time.Unix())
		if l.Boundary {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	b = bin.AppendUvarint(b, uint64(len(ps)))
	for _, p := range ps {
		str(p)
	}
	b = bin.AppendUvarint(b, uint64(len(e.Lines)))
	for _, l := range e.Lines {
		b = bin.AppendUvarint(b, uint64(commits[l.Commit]))
		b = bin.AppendUvarint(b, uint64(paths[l.Path]))
		b = bin.AppendUvarint(b, uint64(l.OrigLine))
	}
	return bin.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
}

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// checked reads file b of the cache (an entry, a pack) after its magic
// line, false when it does not begin with magic or its checksum (the
// CRC-32C of all before its last four bytes) does not hold.
func checked(b []byte, magic string) (*ageReader, bool) {
	if len(b) < len(magic)+4 || !bytes.HasPrefix(b, []byte(magic)) {
		return nil, false
	}
	body, sum := b[:len(b)-4], bin.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, crc32c) != sum {
		return nil, false
	}
	return &ageReader{b: body[len(magic):]}, true
}

// errAges is the error of an entry that does not read back.
var errAges = errors.New("not a line-age entry")

// decodeAges reads an entry's file, refusing anything encodeAges did
// not write.
func decodeAges(b []byte) (*ageEntry, error) {
	r, ok := checked(b, ageMagic)
	if !ok {
		return nil, errAges
	}
	if r.uint(1) != ageVersion {
		return nil, errAges
	}
	e := &ageEntry{}
	for _, s := range []*string{&e.Flags, &e.Repo, &e.Path, &e.Commit, &e.Blob} {
		*s = r.str()
	}
	type commit struct {
		id       string
		at       time.Time
		boundary bool
	}
	// Each commit, file and line takes a byte at least: a count over
	// what is left is a lie.
	cs := make([]commit, r.uint(len(r.b)))
	for i := range cs {
		cs[i].id = r.str()
		cs[i].at = time.Unix(r.int(), 0).UTC()
		cs[i].boundary = r.byte() == 1
	}
	ps := make([]string, r.uint(len(r.b)))
	for i := range ps {
		ps[i] = r.str()
	}
	e.Lines = make([]blamed, r.uint(len(r.b)))
	for i := range e.Lines {
		c, p, orig := r.uint(len(cs)-1), r.uint(len(ps)-1), r.uint(1<<31)
		if r.err != nil {
			break
		}
		e.Lines[i] = blamed{Commit: cs[c].id, Path: ps[p], OrigLine: int(orig), Time: cs[c].at, Boundary: cs[c].boundary}
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errAges
	}
	for _, l := range e.Lines {
		if l.OrigLine < 1 || l.Commit == uncommitted {
			return nil, errAges
		}
	}
	return e, nil
}

// ageReader reads an entry's varints and strings; the first thing that
// does not read sets err, and all after it read as zero.
type ageReader struct {
	b   []byte
	err error
}

func (r *ageReader) fail() { r.err, r.b = errAges, nil }

// uint reads an unsigned varint no larger than max.
func (r *ageReader) uint(max int) uint64 {
	v, n := bin.Uvarint(r.b)
	if r.err != nil || n <= 0 || max < 0 || v > uint64(max) {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *ageReader) int() int64 {
	v, n := bin.Varint(r.b)
	if r.err != nil || n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *ageReader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *ageReader) str() string {
	n := r.uint(len(r.b))
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail()
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
