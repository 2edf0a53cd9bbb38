package blame

import (
	"crypto/sha256"
	bin "encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// A directory's pack: the line-age cache's entries (ages and answers) of
// the files a summary blamed, kept as one file for the directory rather
// than two files each (creating a file is most of what writing a small
// entry costs: a cold summary of 168 files spent a seventh of its CPU
// creating 336). A pack holds each entry as its own file would, and an
// entry is looked for in its own file first, then in the packs of the
// directories above its file, nearest first: a file's blame after a
// summary of its directory finds what the summary found. A summary reads
// its directory's pack once, and writes it again, whole, when it found
// something new, with the entries of the files it blamed only.

const (
	packMagic   = "loom blame pack\n"
	packVersion = 1
	packSuffix  = ".pack"
)

// pending is the pack of the summary under way: the entries read from
// its directory's pack, and those written since, by entry name.
type pending struct {
	repo, dir string
	entries   map[string][]byte
	changed   bool
}

// packName is the pack's file of directory dir ("." for the top) of
// repo.
func (c *ageCache) packName(repo, dir string) string {
	h := sha256.Sum256([]byte(repo + "\x00" + dir + "\x00pack"))
	return filepath.Join(c.dir, hex.EncodeToString(h[:16])+packSuffix)
}

// entry is the bytes of the entry whose file is name, of file rel of
// repo: the summary's pack, the entry's own file, or the pack of a
// directory above rel.
func (c *ageCache) entry(repo, rel, name string) []byte {
	base := filepath.Base(name)
	c.mu.Lock()
	if p := c.pack; p != nil && p.repo == repo {
		if b, ok := p.entries[base]; ok {
			c.mu.Unlock()
			return b
		}
	}
	c.mu.Unlock()
	if b := c.read(name); b != nil {
		return b
	}
	for d := path.Dir(rel); ; d = path.Dir(d) {
		if b := c.packs(repo, d)[base]; b != nil {
			return b
		}
		if d == "." || d == "/" {
			return nil
		}
	}
}

// packs are the entries of dir's pack of repo, read once a process
// (nil when there is none or it does not read back).
func (c *ageCache) packs(repo, dir string) map[string][]byte {
	name := c.packName(repo, dir)
	c.mu.Lock()
	es, ok := c.read1[name]
	c.mu.Unlock()
	if ok {
		return es
	}
	es, _ = decodePack(c.read(name), repo, dir)
	c.mu.Lock()
	if c.read1 == nil {
		c.read1 = map[string]map[string][]byte{}
	}
	c.read1[name] = es
	c.mu.Unlock()
	return es
}

// beginPack makes the entries written from now on, until endPack, those
// of the summary of dir in repo.
func (c *ageCache) beginPack(repo, dir string) {
	dir = path.Clean(dir)
	p := &pending{repo: repo, dir: dir, entries: map[string][]byte{}}
	for k, b := range c.packs(repo, dir) {
		p.entries[k] = b
	}
	c.mu.Lock()
	c.pack = p
	c.mu.Unlock()
}

// endPack writes the summary's pack, of files' entries, when something
// was written since beginPack; a pack too large is written as each
// entry's own file.
func (c *ageCache) endPack(files []string) error {
	c.mu.Lock()
	p := c.pack
	c.pack = nil
	c.mu.Unlock()
	if p == nil || !p.changed {
		return nil
	}
	keep := map[string][]byte{}
	for _, f := range files {
		for _, name := range []string{c.ageName(p.repo, f), c.answerName(p.repo, f)} {
			if b, ok := p.entries[filepath.Base(name)]; ok {
				keep[filepath.Base(name)] = b
			}
		}
	}
	b := encodePack(p.repo, p.dir, keep)
	if len(b) <= maxAgeEntry {
		return c.write(c.packName(p.repo, p.dir), b)
	}
	for name, e := range keep {
		if err := c.write(filepath.Join(c.dir, name), e); err != nil {
			return err
		}
	}
	return nil
}

// encodePack is a pack's file: the magic line, the version, the
// repository and directory, the count of entries and each entry's name
// and bytes (strings: a length and bytes), in the order of their names;
// last the CRC-32C of all before it.
func encodePack(repo, dir string, entries map[string][]byte) []byte {
	var b []byte
	str := func(s []byte) { b = bin.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	b = append(b, packMagic...)
	b = bin.AppendUvarint(b, packVersion)
	str([]byte(repo))
	str([]byte(dir))
	names := slices.Sorted(maps.Keys(entries))
	b = bin.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		str([]byte(n))
		str(entries[n])
	}
	return bin.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
}

// errPack is the error of a pack that does not read back.
var errPack = errors.New("not a pack of line-age entries")

// decodePack reads a pack's file of dir in repo, refusing anything
// encodePack did not write, or wrote of another directory.
func decodePack(b []byte, repo, dir string) (map[string][]byte, error) {
	r, ok := checked(b, packMagic)
	if !ok {
		return nil, errPack
	}
	if r.uint(1) != packVersion || r.str() != repo || r.str() != dir {
		return nil, errPack
	}
	es := map[string][]byte{}
	for n := r.uint(len(r.b)); n > 0 && r.err == nil; n-- {
		name := r.str()
		if strings.ContainsAny(name, "/\\") {
			return nil, errPack
		}
		es[name] = []byte(r.str())
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errPack
	}
	return es, nil
}
