// Package observe records what an agent's shell call changed in a work
// tree, from the agent's hooks around its tools: before the call a
// snapshot of the tree (each file's size and modification time, the
// text of only the files changed since git's index was written), after
// it the files whose text changed, with hashes of their text before and
// after and the lines that changed. loom blame credits those lines to
// the call's session (Edits), where reading the command line could not
// tell what the command wrote (a script, a formatter, a generator).
package observe

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/loomhq/loom/internal/gitindex"
)

// Limits of what a snapshot keeps the text of: a file bigger than
// maxText is seen by its size and time alone, and past maxSaved files
// (a tree of many untracked files) the others too.
const (
	maxText  = 1 << 20
	maxSaved = 256
)

type fileStat struct {
	Size  int64
	Mtime int64
}

// Snapshot is a work tree at one moment: every file git would list
// (tracked, and untracked but not ignored: no node_modules), by its path
// relative to Root.
type Snapshot struct {
	Root  string
	Files map[string]fileStat
	// Saved is the text of the files that may differ from git's index
	// (changed since the index was written, or untracked), when the
	// snapshot was taken with it: what a file was before a call, where
	// the index cannot tell.
	Saved map[string][]byte
}

// Tree is the repository a directory is in: its top level and its index
// file.
type Tree struct {
	Root, Index string
}

// Find is the repository dir is in: found from its files where they
// tell it for certain (gitindex.Top: a git process fewer before each
// call), else by git.
func Find(ctx context.Context, dir string) (Tree, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			if top, gitDir, _, ok := gitindex.Top(real); ok {
				return Tree{Root: top, Index: filepath.Join(gitDir, "index")}, nil
			}
		}
	}
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel", "--git-path", "index")
	if err != nil {
		return Tree{}, err
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(f) != 2 {
		return Tree{}, fmt.Errorf("git rev-parse in %s: %q", dir, out)
	}
	idx := f[1]
	if !filepath.IsAbs(idx) {
		idx = filepath.Join(dir, idx)
	}
	return Tree{Root: f[0], Index: idx}, nil
}

// Take is the snapshot of t; with text, the text of the files that may
// differ from the index is kept too. The tracked files (git's index) and
// the untracked ones not ignored (git's walk of the tree, the slower
// part) are listed at once, and the tracked ones stat'ed on every core
// while git walks.
func Take(ctx context.Context, t Tree, text bool) (*Snapshot, error) {
	type listing struct {
		out []byte
		err error
	}
	others := make(chan listing, 1)
	go func() {
		out, err := git(ctx, t.Root, "ls-files", "-z", "--others", "--exclude-standard")
		others <- listing{out, err}
	}()
	tracked, err := trackedPaths(ctx, t)
	if err != nil {
		<-others
		return nil, err
	}
	var since int64
	if fi, err := os.Stat(t.Index); err == nil {
		// A file written in the index's second may not be the index's.
		since = fi.ModTime().UnixNano() - 1e9
	}
	s := &Snapshot{Root: t.Root, Files: make(map[string]fileStat, len(tracked)+16)}
	s.stat(tracked)
	o := <-others
	if o.err != nil {
		return nil, o.err
	}
	untracked := split(o.out)
	s.stat(untracked)
	if text {
		// In git's order: which files are kept when there are too many
		// is the same each time.
		s.Saved = map[string][]byte{}
		for _, p := range slices.Concat(tracked, untracked) {
			st, ok := s.Files[p]
			if _, dup := s.Saved[p]; ok && !dup && st.Mtime >= since && st.Size <= maxText && len(s.Saved) < maxSaved {
				if b, err := os.ReadFile(filepath.Join(t.Root, p)); err == nil {
					s.Saved[p] = b
				}
			}
		}
	}
	return s, nil
}

// trackedPaths are the paths of t's index in its order, as git ls-files
// --cached lists them: read from the index file itself (a tenth of the
// git process's time), or from git where the file is one only git reads
// (a split or sparse index, another object format).
func trackedPaths(ctx context.Context, t Tree) ([]string, error) {
	index, ok := t.Index, t.Index != ""
	if !ok {
		index, ok = gitindex.Locate(t.Root)
	}
	if ok {
		if ps, err := gitindex.Paths(index); err == nil {
			return ps, nil
		}
	}
	cached, err := git(ctx, t.Root, "ls-files", "-z", "--cached")
	if err != nil {
		return nil, err
	}
	return split(cached), nil
}

// parseDebug reads git ls-files -z --debug: the paths the index holds,
// in its order, and the size and time it recorded of each (what git
// compares a file's stat with to know it unchanged).
func parseDebug(out []byte) ([]string, map[string]fileStat) {
	var paths []string
	stats := map[string]fileStat{}
	for len(out) > 0 {
		p, rest, ok := bytes.Cut(out, []byte{0})
		if !ok {
			break
		}
		var st fileStat
		// Five lines: ctime, mtime, dev and ino, uid and gid, size and
		// flags; the second and the fifth are read.
		for i := range 5 {
			var line []byte
			line, rest, _ = bytes.Cut(rest, []byte{'\n'})
			switch i {
			case 1:
				_, v, _ := bytes.Cut(line, []byte("mtime: "))
				sec, nsec, _ := bytes.Cut(v, []byte{':'})
				st.Mtime = atoi(sec)*1e9 + atoi(nsec)
			case 4:
				_, v, _ := bytes.Cut(line, []byte("size: "))
				v, _, _ = bytes.Cut(v, []byte{'\t'})
				st.Size = atoi(v)
			}
		}
		paths = append(paths, string(p))
		stats[string(p)] = st
		out = rest
	}
	return paths, stats
}

// atoi is the decimal number b holds (0 for none).
func atoi(b []byte) int64 {
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// matches says whether a file's stat is what the index recorded of it:
// its size (which the index keeps in 32 bits) and its time (to the
// second where the index kept no nanoseconds).
func (in fileStat) matches(st fileStat) bool {
	if in.Size != st.Size&0xffffffff {
		return false
	}
	if in.Mtime%1e9 == 0 {
		return in.Mtime/1e9 == st.Mtime/1e9
	}
	return in.Mtime == st.Mtime
}

func split(out []byte) []string {
	ps := strings.Split(string(out), "\x00")
	if n := len(ps); n > 0 && ps[n-1] == "" {
		ps = ps[:n-1]
	}
	return ps
}

// stat adds the regular files among paths to s, their stats taken on
// every core (statDir: the files of one directory at a time).
func (s *Snapshot) stat(paths []string) {
	// Runs of paths in one directory: git lists a directory's files
	// together.
	type run struct{ from, to int }
	var runs []run
	for i := 0; i < len(paths); {
		dir := path.Dir(paths[i])
		j := i + 1
		for j < len(paths) && path.Dir(paths[j]) == dir {
			j++
		}
		runs = append(runs, run{i, j})
		i = j
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), len(paths)/500))
	stats := make([]fileStat, len(paths))
	ok := make([]bool, len(paths))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for k := w; k < len(runs); k += workers {
				r := runs[k]
				statDir(s.Root, paths[r.from:r.to], stats[r.from:r.to], ok[r.from:r.to])
			}
		})
	}
	wg.Wait()
	for i, p := range paths {
		if ok[i] {
			// A path listed twice (conflicting stages) is one file.
			s.Files[p] = stats[i]
		}
	}
}

// changed are the paths whose size or time differ between s and after,
// or that one of them lacks.
func (s *Snapshot) changed(after *Snapshot) []string {
	var out []string
	for p, st := range after.Files {
		if b, ok := s.Files[p]; !ok || b != st {
			out = append(out, p)
		}
	}
	for p := range s.Files {
		if _, ok := after.Files[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

func gitCmd(ctx context.Context, dir string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
}

func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := gitCmd(ctx, dir, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		line, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return nil, fmt.Errorf("git %s in %s: %v %s", args[0], dir, err, line)
	}
	return out, nil
}
