package gitindex

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Probe is what `git rev-parse --show-toplevel --is-shallow-repository
// --absolute-git-dir HEAD HEAD:<file>` tells of a file, read from the
// repository's files without starting git.
type Probe struct {
	// Top is the work tree's top-level directory, GitDir its git
	// directory.
	Top, GitDir string
	// Shallow is whether the repository is a shallow clone.
	Shallow bool
	// Head is the commit HEAD names; Blob the file's object in it.
	Head, Blob string
}

// gitEnv are the variables with which git finds its repository, index
// or objects elsewhere than the work tree's .git says.
var gitEnv = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_NAMESPACE",
	"GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"}

// ProbeFile tells of file (an absolute path, symbolic links resolved)
// what git's rev-parse would, where it can be known for certain from
// the repository's files: a work tree found by its .git (a directory,
// or a file naming one: a linked work tree, a submodule), HEAD a branch
// whose commit is in the object store whole (loose, or in a pack and
// not a delta), and git's index holding HEAD's tree (its cache of trees
// valid at the root and naming HEAD's tree), whose entry for file is
// then HEAD's object of it. ok is false otherwise (git's environment
// naming a repository, a configuration that moves the work tree, a
// change staged, a file the index does not hold, anything not read
// here): ask git.
func ProbeFile(file string) (p Probe, ok bool) {
	top, gitDir, common, ok := Top(filepath.Dir(file))
	if !ok {
		return p, false
	}
	rel, err := filepath.Rel(top, file)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return p, false
	}
	rel = filepath.ToSlash(rel)
	base, es, ok := headIndex(top, gitDir, common)
	if !ok {
		return p, false
	}
	for _, e := range es {
		if e.Path == rel && e.Stage == 0 && isBlob(e.Mode) {
			base.Blob = e.OID()
			return base, true
		}
	}
	return p, false
}

// ProbeTree is ProbeFile of every file of the work tree whose top is
// top, `git rev-parse --is-shallow-repository --absolute-git-dir HEAD`
// and `git ls-tree -r HEAD`: the probe without a file, and the object of
// each file at HEAD by its path. ok is false where ProbeFile's would be.
func ProbeTree(top string) (p Probe, blobs map[string]string, ok bool) {
	t, gitDir, common, ok := Top(top)
	if !ok || t != top {
		return p, nil, false
	}
	p, es, ok := headIndex(top, gitDir, common)
	if !ok {
		return p, nil, false
	}
	blobs = make(map[string]string, len(es))
	for _, e := range es {
		if e.Stage == 0 && isBlob(e.Mode) {
			blobs[e.Path] = e.OID()
		}
	}
	return p, blobs, true
}

// isBlob says whether an entry's mode is a file's or a link's (an
// object of type blob at HEAD), not a submodule's commit.
func isBlob(mode uint32) bool {
	return mode&0o170000 == 0o100000 || mode&0o170000 == 0o120000
}

// headIndex is what a probe tells without a file, and the index's
// entries when they are HEAD's tree (its cache of trees valid at the
// root and naming HEAD's tree); ok false otherwise.
func headIndex(top, gitDir, common string) (Probe, []Entry, bool) {
	head, ok := readHead(gitDir, common)
	if !ok {
		return Probe{}, nil, false
	}
	tree, ok := commitTree(common, head)
	if !ok {
		return Probe{}, nil, false
	}
	es, ext, err := load(filepath.Join(gitDir, "index"))
	if err != nil || cacheTreeRoot(ext) != tree {
		return Probe{}, nil, false
	}
	return Probe{Top: top, GitDir: gitDir, Shallow: exists(filepath.Join(common, "shallow")), Head: head}, es, true
}

// Top is the work tree dir is in, found as git finds it (dir absolute,
// its links resolved): its top-level directory, its git directory and
// the repository's common directory (a linked work tree's differs). ok
// is false where git may find another or none: git's environment
// naming a repository, dir inside a git directory, a repository of
// another owner, a configuration that moves the work tree or is not
// read here (bare, another object format, included files).
func Top(dir string) (top, gitDir, common string, ok bool) {
	for _, v := range gitEnv {
		if os.Getenv(v) != "" {
			return "", "", "", false
		}
	}
	top = dir
	var dot os.FileInfo
	for {
		if filepath.Base(top) == ".git" {
			return "", "", "", false // inside a git directory: no work tree
		}
		fi, err := os.Lstat(filepath.Join(top, ".git"))
		if err == nil {
			dot = fi
			break
		}
		up := filepath.Dir(top)
		if up == top {
			return "", "", "", false
		}
		top = up
	}
	if !mine(dot) {
		return "", "", "", false // git's check of the repository's owner is git's
	}
	index, ok := Locate(top)
	if !ok {
		return "", "", "", false
	}
	gitDir = filepath.Dir(index)
	if rel, err := filepath.Rel(gitDir, dir); err == nil && !strings.HasPrefix(rel, "..") {
		return "", "", "", false // inside the git directory
	}
	common = gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = filepath.Clean(c)
	}
	if !plainConfig(filepath.Join(common, "config"), gitDir, top) || exists(filepath.Join(gitDir, "config.worktree")) || exists(filepath.Join(common, "reftable")) {
		return "", "", "", false
	}
	return top, gitDir, common, true
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// plainConfig says whether a repository's configuration leaves git
// finding things where this package looks: a work tree set (a
// submodule's core.worktree) that is top, not bare, SHA-1 objects, no
// included files, files for refs, paths compared as they are.
func plainConfig(path, gitDir, top string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		key, val := strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch {
		case strings.HasPrefix(key, "[include"):
			return false
		case key == "worktree":
			if !filepath.IsAbs(val) {
				val = filepath.Join(gitDir, val)
			}
			if r, err := filepath.EvalSymlinks(val); err != nil || r != top {
				return false
			}
		case key == "bare" || key == "ignorecase" || key == "precomposeunicode":
			if strings.ToLower(val) != "false" {
				return false
			}
		case key == "objectformat" || key == "refstorage" || key == "worktreeconfig":
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	if len(s) != 2*hashLen {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// readHead is the commit HEAD names: detached, or a branch's loose ref
// or its line of packed-refs.
func readHead(gitDir, common string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", false
	}
	s := strings.TrimSpace(string(b))
	if isHex(s) {
		return s, true
	}
	ref, ok := strings.CutPrefix(s, "ref: ")
	if !ok || !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
		return "", false
	}
	if b, err := os.ReadFile(filepath.Join(common, filepath.FromSlash(ref))); err == nil {
		s := strings.TrimSpace(string(b))
		return s, isHex(s)
	} else if !os.IsNotExist(err) {
		return "", false
	}
	f, err := os.Open(filepath.Join(common, "packed-refs"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		id, name, ok := strings.Cut(sc.Text(), " ")
		if ok && name == ref && isHex(id) {
			return id, true
		}
	}
	return "", false // an unborn branch, or one not read here
}

// commitTree is the tree commit names, read from its loose object or a
// pack that holds it whole.
func commitTree(common, commit string) (string, bool) {
	objects := filepath.Join(common, "objects")
	if f, err := os.Open(filepath.Join(objects, commit[:2], commit[2:])); err == nil {
		defer f.Close()
		z, err := zlib.NewReader(f)
		if err != nil {
			return "", false
		}
		head := make([]byte, 64)
		n, _ := io.ReadFull(z, head)
		hdr, rest, ok := bytes.Cut(head[:n], []byte{0})
		if !ok || !bytes.HasPrefix(hdr, []byte("commit ")) {
			return "", false
		}
		return treeLine(rest)
	}
	idxs, _ := filepath.Glob(filepath.Join(objects, "pack", "*.idx"))
	want, err := hex.DecodeString(commit)
	if err != nil {
		return "", false
	}
	for _, idx := range idxs {
		off, found, ok := packOffset(idx, want)
		if !ok {
			return "", false
		}
		if found {
			return packedCommitTree(strings.TrimSuffix(idx, ".idx")+".pack", off)
		}
	}
	return "", false
}

// treeLine reads "tree <hex>\n" at the start of a commit's text.
func treeLine(b []byte) (string, bool) {
	t, ok := bytes.CutPrefix(b, []byte("tree "))
	if !ok || len(t) < 2*hashLen+1 || t[2*hashLen] != '\n' {
		return "", false
	}
	s := string(t[:2*hashLen])
	return s, isHex(s)
}

// packOffset finds an object in a pack's index (version 2): its offset
// in the pack, found false when the pack does not hold it, ok false when
// the index does not read. It reads the header, the names of the
// objects whose first byte is the object's and one offset, not the
// whole index (hundreds of kilobytes in a large repository).
func packOffset(idx string, want []byte) (off int64, found, ok bool) {
	f, err := os.Open(idx)
	if err != nil {
		return 0, false, false
	}
	defer f.Close()
	head := make([]byte, 8+256*4)
	if _, err := f.ReadAt(head, 0); err != nil || string(head[:4]) != "\xfftOc" || binary.BigEndian.Uint32(head[4:]) != 2 {
		return 0, false, false
	}
	fan := head[8:]
	n := int64(binary.BigEndian.Uint32(fan[255*4:]))
	lo := int64(0)
	if want[0] > 0 {
		lo = int64(binary.BigEndian.Uint32(fan[(int(want[0])-1)*4:]))
	}
	hi := int64(binary.BigEndian.Uint32(fan[int(want[0])*4:]))
	if hi > n || lo > hi {
		return 0, false, false
	}
	names := make([]byte, (hi-lo)*hashLen)
	base := int64(len(head))
	if _, err := f.ReadAt(names, base+lo*hashLen); err != nil {
		return 0, false, false
	}
	for k := int64(0); k < hi-lo; k++ {
		if !bytes.Equal(names[k*hashLen:(k+1)*hashLen], want) {
			continue
		}
		m := lo + k
		offs := base + n*hashLen + n*4 // past the names and their CRCs
		var b [8]byte
		if _, err := f.ReadAt(b[:4], offs+m*4); err != nil {
			return 0, false, false
		}
		o := binary.BigEndian.Uint32(b[:4])
		if o&0x80000000 == 0 {
			return int64(o), true, true
		}
		if _, err := f.ReadAt(b[:], offs+n*4+int64(o&0x7fffffff)*8); err != nil {
			return 0, false, false
		}
		return int64(binary.BigEndian.Uint64(b[:])), true, true
	}
	return 0, false, true
}

// packedCommitTree reads the tree line of the commit at off in pack,
// stored whole (a delta is not read here).
func packedCommitTree(pack string, off int64) (string, bool) {
	f, err := os.Open(pack)
	if err != nil {
		return "", false
	}
	defer f.Close()
	r := bufio.NewReader(io.NewSectionReader(f, off, 1<<62))
	c, err := r.ReadByte()
	if err != nil || (c>>4)&7 != 1 { // OBJ_COMMIT
		return "", false
	}
	for c&0x80 != 0 {
		if c, err = r.ReadByte(); err != nil {
			return "", false
		}
	}
	z, err := zlib.NewReader(r)
	if err != nil {
		return "", false
	}
	head := make([]byte, 64)
	n, _ := io.ReadFull(z, head)
	return treeLine(head[:n])
}

// cacheTreeRoot is the tree git's cache of trees (the index's TREE
// extension) names for the whole index, "" when it has none valid.
func cacheTreeRoot(ext map[string][]byte) string {
	t := ext["TREE"]
	if len(t) == 0 || t[0] != 0 { // the root's path is ""
		return ""
	}
	line, rest, ok := bytes.Cut(t[1:], []byte{'\n'})
	if !ok {
		return ""
	}
	count, _, _ := bytes.Cut(line, []byte{' '})
	if len(count) == 0 || count[0] == '-' || len(rest) < hashLen {
		return "" // -1: not valid
	}
	return hex.EncodeToString(rest[:hashLen])
}
