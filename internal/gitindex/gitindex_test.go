package gitindex

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("git %s: %v %s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// gitEntries is what git says the index at dir holds: ls-files --stage
// for mode, object, stage and path, --debug for size and time.
func gitEntries(t *testing.T, dir string) []Entry {
	t.Helper()
	var es []Entry
	for _, rec := range strings.Split(git(t, dir, "ls-files", "-z", "--stage"), "\x00") {
		if rec == "" {
			continue
		}
		meta, p, _ := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		mode, _ := strconv.ParseUint(f[0], 8, 32)
		stage, _ := strconv.Atoi(f[2])
		e := Entry{Path: p, Mode: uint32(mode), Stage: stage}
		hex.Decode(e.ID[:], []byte(f[1]))
		es = append(es, e)
	}
	debug := strings.Split(git(t, dir, "ls-files", "-z", "--stage", "--debug"), "\x00")
	// Each record: "<stage line>\t<path>" then, before the next NUL, the
	// five debug lines of it.
	k := 0
	for i, rec := range debug {
		if rec == "" || k >= len(es) {
			continue
		}
		lines := strings.Split(rec, "\n")
		if i == 0 {
			continue // the first path's debug lines are in the next record
		}
		for _, l := range lines {
			l = strings.TrimSpace(l)
			switch {
			case strings.HasPrefix(l, "mtime: "):
				s, ns, _ := strings.Cut(strings.TrimPrefix(l, "mtime: "), ":")
				a, _ := strconv.ParseUint(s, 10, 32)
				b, _ := strconv.ParseUint(ns, 10, 32)
				es[k].MtimeSec, es[k].MtimeNsec = uint32(a), uint32(b)
			case strings.HasPrefix(l, "size: "):
				v, _, _ := strings.Cut(strings.TrimPrefix(l, "size: "), "\t")
				a, _ := strconv.ParseUint(v, 10, 32)
				es[k].Size = uint32(a)
				k++
			}
		}
	}
	if k != len(es) {
		t.Fatalf("read the debug lines of %d entries of %d", k, len(es))
	}
	return es
}

func indexPath(t *testing.T, dir string) string {
	p := strings.TrimSpace(git(t, dir, "rev-parse", "--git-path", "index"))
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return p
}

func agree(t *testing.T, dir, what string) {
	t.Helper()
	got, err := Read(indexPath(t, dir))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	want := gitEntries(t, dir)
	if !slices.Equal(got, want) {
		for i := range max(len(got), len(want)) {
			if i >= len(got) || i >= len(want) || got[i] != want[i] {
				t.Fatalf("%s: entry %d: read %+v, git %+v (%d entries read, git %d)", what, i, at(got, i), at(want, i), len(got), len(want))
			}
		}
	}
	paths, err := Paths(indexPath(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if lsf := git(t, dir, "ls-files", "-z"); strings.Join(paths, "\x00")+"\x00" != lsf && !(len(paths) == 0 && lsf == "") {
		t.Fatalf("%s: paths differ from ls-files -z", what)
	}
}

func at(es []Entry, i int) any {
	if i < len(es) {
		return es[i]
	}
	return "none"
}

func seed(t *testing.T) uint64 {
	if s := os.Getenv("LOOM_GITINDEX_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return rand.Uint64()
}

// TestReadAgreesWithGit: random trees (nested directories, odd names,
// long names, symlinks, executables, a submodule's commit), random
// changes staged, files added with intent, skip-worktree, conflicts,
// each index version and the untracked cache: what Read gives is what
// git ls-files says, entry for entry.
func TestReadAgreesWithGit(t *testing.T) {
	for round := range 6 {
		s := seed(t)
		t.Run(fmt.Sprint(s), func(t *testing.T) {
			t.Logf("seed %d (LOOM_GITINDEX_SEED=%d replays it)", s, s)
			r := rand.New(rand.NewPCG(s, uint64(round)))
			dir := t.TempDir()
			git(t, dir, "init", "-q", "-b", "main")
			names := []string{"a", "b c", "é", "x-y", "long" + strings.Repeat("n", 120), "z.go", "ü/ö", "_", "A"}
			var files []string
			for range 20 + r.IntN(200) {
				depth := r.IntN(4)
				var parts []string
				for range depth + 1 {
					parts = append(parts, names[r.IntN(len(names))]+strconv.Itoa(r.IntN(5)))
				}
				p := filepath.Join(parts...)
				if slices.ContainsFunc(files, func(f string) bool {
					return strings.HasPrefix(f+"/", p+"/") || strings.HasPrefix(p+"/", f+"/")
				}) {
					continue
				}
				if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
					t.Fatal(err)
				}
				switch r.IntN(10) {
				case 0:
					if err := os.Symlink("target"+strconv.Itoa(r.IntN(9)), filepath.Join(dir, p)); err != nil {
						t.Fatal(err)
					}
				default:
					mode := os.FileMode(0o644)
					if r.IntN(8) == 0 {
						mode = 0o755
					}
					if err := os.WriteFile(filepath.Join(dir, p), bytes.Repeat([]byte("line\n"), r.IntN(50)), mode); err != nil {
						t.Fatal(err)
					}
				}
				files = append(files, p)
			}
			git(t, dir, "add", "-A")
			git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("ab", 20)+",sub/mod")
			git(t, dir, "commit", "-q", "-m", "one")
			agree(t, dir, "committed")
			for _, f := range files {
				switch r.IntN(8) {
				case 0:
					os.WriteFile(filepath.Join(dir, f), []byte("changed\n"), 0o644)
					git(t, dir, "add", "--", f)
				case 1:
					git(t, dir, "rm", "-q", "--cached", "--", f)
				case 2:
					git(t, dir, "update-index", "--skip-worktree", "--", f)
				}
			}
			os.WriteFile(filepath.Join(dir, "new-intent"), []byte("n\n"), 0o644)
			git(t, dir, "add", "-N", "new-intent")
			for _, v := range []string{"2", "3", "4", strconv.Itoa(2 + r.IntN(3))} {
				if v == "2" {
					// Extended flags (skip-worktree, intent to add) need 3.
					continue
				}
				git(t, dir, "update-index", "--index-version", v)
				agree(t, dir, "version "+v)
			}
			git(t, dir, "update-index", "--untracked-cache")
			git(t, dir, "status", "--porcelain")
			agree(t, dir, "with the untracked cache")
		})
	}
}

// TestReadConflictAndVersion2: a merge in conflict lists the path once
// a stage; a plain index of version 2.
func TestReadConflictAndVersion2(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "f"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "g"), []byte("g\n"), 0o644)
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "1")
	git(t, dir, "update-index", "--index-version", "2")
	agree(t, dir, "version 2")
	git(t, dir, "checkout", "-q", "-b", "other")
	os.WriteFile(filepath.Join(dir, "f"), []byte("b\n"), 0o644)
	git(t, dir, "commit", "-q", "-am", "2")
	git(t, dir, "checkout", "-q", "main")
	os.WriteFile(filepath.Join(dir, "f"), []byte("c\n"), 0o644)
	git(t, dir, "commit", "-q", "-am", "3")
	cmd := exec.Command("git", "merge", "-q", "other")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if cmd.Run() == nil {
		t.Fatal("the merge should conflict")
	}
	agree(t, dir, "in conflict")
	es, _ := Read(indexPath(t, dir))
	if n := len(slices.DeleteFunc(es, func(e Entry) bool { return e.Path != "f" })); n != 3 {
		t.Fatalf("f at %d stages, want 3", n)
	}
}

// TestReadWorktreeAndEmpty: a linked work tree's own index; a
// repository with no index yet is empty.
func TestReadWorktreeAndEmpty(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	if es, err := Read(indexPath(t, dir)); err != nil || len(es) != 0 {
		t.Fatalf("no index: %v %v", es, err)
	}
	os.WriteFile(filepath.Join(dir, "f"), []byte("a\n"), 0o644)
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "1")
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "-q", "-b", "w", wt)
	os.WriteFile(filepath.Join(wt, "only-here"), []byte("w\n"), 0o644)
	git(t, wt, "add", ".")
	agree(t, wt, "linked work tree")
	agree(t, dir, "main work tree")
}

// TestReadUnsupported: the indexes git must be asked about are refused,
// not misread.
func TestReadUnsupported(t *testing.T) {
	mk := func(t *testing.T, args ...string) string {
		dir := t.TempDir()
		git(t, dir, append([]string{"init", "-q", "-b", "main"}, args...)...)
		for i := range 5 {
			os.MkdirAll(filepath.Join(dir, "d"+strconv.Itoa(i)), 0o755)
			os.WriteFile(filepath.Join(dir, "d"+strconv.Itoa(i), "f"), []byte("a\n"), 0o644)
		}
		git(t, dir, "add", ".")
		git(t, dir, "commit", "-q", "-m", "1")
		return dir
	}
	t.Run("split", func(t *testing.T) {
		dir := mk(t)
		git(t, dir, "update-index", "--split-index")
		if _, err := Read(indexPath(t, dir)); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("split index read: %v", err)
		}
	})
	t.Run("sparse", func(t *testing.T) {
		dir := mk(t)
		git(t, dir, "sparse-checkout", "set", "--cone", "--sparse-index", "d1")
		if _, err := Read(indexPath(t, dir)); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("sparse index read: %v", err)
		}
	})
	t.Run("sha256", func(t *testing.T) {
		dir := mk(t, "--object-format=sha256")
		if _, err := Read(indexPath(t, dir)); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("sha256 index read: %v", err)
		}
	})
	t.Run("damaged", func(t *testing.T) {
		dir := mk(t)
		p := indexPath(t, dir)
		b, _ := os.ReadFile(p)
		b[30] ^= 1
		if _, err := Parse(b); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("damaged index read: %v", err)
		}
	})
}

// TestLocateAgreesWithGit: the index Locate finds is the one git names
// (rev-parse --git-path index) in a repository, a linked work tree and
// a submodule, from the top of each; with GIT_DIR or GIT_INDEX_FILE set,
// or no .git at all (a bare repository), it declines.
func TestLocateAgreesWithGit(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	os.MkdirAll(repo, 0o755)
	git(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "f"), []byte("a\n"), 0o644)
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "1")
	wt := filepath.Join(root, "wt")
	git(t, repo, "worktree", "add", "-q", "-b", "w", wt)
	git(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", repo, "sub")
	sub := filepath.Join(repo, "sub")
	real := func(p string) string {
		d, err := filepath.EvalSymlinks(filepath.Dir(p))
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Join(d, filepath.Base(p))
	}
	for _, top := range []string{repo, wt, sub} {
		got, ok := Locate(top)
		if !ok {
			t.Fatalf("%s: not located", top)
		}
		if want := indexPath(t, top); real(got) != real(want) {
			t.Errorf("%s: located %s, git names %s", top, got, want)
		}
	}
	if fi, err := os.Lstat(filepath.Join(sub, ".git")); err != nil || fi.IsDir() {
		t.Fatalf("the submodule's .git should be a file naming its git directory: %v", err)
	}
	bare := filepath.Join(root, "bare.git")
	git(t, root, "clone", "-q", "--bare", repo, bare)
	if p, ok := Locate(bare); ok {
		t.Errorf("a bare repository located %s", p)
	}
	for _, v := range []string{"GIT_DIR", "GIT_INDEX_FILE"} {
		t.Setenv(v, filepath.Join(repo, ".git"))
		if p, ok := Locate(repo); ok {
			t.Errorf("with %s set located %s", v, p)
		}
		os.Unsetenv(v)
	}
}

// BenchmarkPaths: the paths of an index of 10,000 files, read here and
// listed by git ls-files -z.
func BenchmarkPaths(b *testing.B) {
	dir := b.TempDir()
	for i := range 10_000 {
		p := filepath.Join(dir, fmt.Sprintf("pkg%03d/file%05d.go", i/50, i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x\n"), 0o644)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	index := filepath.Join(dir, ".git", "index")
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if ps, err := Paths(index); err != nil || len(ps) != 10_000 {
				b.Fatal(len(ps), err)
			}
		}
	})
	b.Run("git", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("git", "-C", dir, "ls-files", "-z").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
