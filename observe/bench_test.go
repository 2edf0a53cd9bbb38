package observe

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpu reports the processor time of each run, this process's and its
// children's (git): what a run costs on a machine others also load,
// where the wall time is theirs as much as its own.
func cpu(b *testing.B) func() {
	var before syscall.Rusage
	var children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	return func() {
		var after, ch syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ch)
		d := func(a, b syscall.Rusage) time.Duration {
			return time.Duration(a.Utime.Nano() + a.Stime.Nano() - b.Utime.Nano() - b.Stime.Nano())
		}
		b.ReportMetric(float64(d(after, before)+d(ch, children))/float64(b.N)/1e6, "cpu-ms/op")
	}
}

// benchRepo is a git repository of n committed files in directories of
// 50, and an ignored node_modules of 2,000 files that a snapshot must
// not walk; a few files changed since the commit. No gc --auto runs in
// the background after the commit (10,000 loose objects would start
// one), writing into .git while the directory is removed.
func benchRepo(b *testing.B, n int) Tree {
	b.Helper()
	dir := b.TempDir()
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("pkg%03d/file%05d.go", i/50, i))
		if i%50 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "package pkg\n\n// File %d.\nvar V%d = %d\n", i, i, i), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 2000 {
		p := filepath.Join(dir, fmt.Sprintf("node_modules/m%02d/index%04d.js", i/100, i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("module.exports = 1\n"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/\n"), 0o644)
	// Written an hour before the commit, as a tree is: none in the
	// index's second.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error { return os.Chtimes(p, old, old) })
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@x", "-c", "gc.auto=0", "commit", "-qm", "start"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	for i := range 5 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("pkg000/file%05d.go", i)), []byte("package pkg\n// changed\n"), 0o644)
	}
	t, err := Find(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	return t
}

// BenchmarkSnapshot is the snapshot a hook takes before a shell call, on
// a repository of 10,000 files: git ls-files and a stat of each, the
// text of the files changed since the index was written.
func BenchmarkSnapshot(b *testing.B) {
	t := benchRepo(b, 10_000)
	b.ResetTimer()
	defer cpu(b)()
	for b.Loop() {
		s, err := Take(b.Context(), t, true)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Files) != 10_001 || len(s.Saved) != 5 {
			b.Fatalf("%d files, %d saved", len(s.Files), len(s.Saved))
		}
	}
}

// BenchmarkBefore is all the hook before a call does, the snapshot kept
// on disk.
func BenchmarkBefore(b *testing.B) {
	t := benchRepo(b, 10_000)
	dir := b.TempDir()
	b.ResetTimer()
	defer cpu(b)()
	for b.Loop() {
		if err := Before(b.Context(), dir, "claude-code:s", "call", t.Root); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatWalk is the other way to list the tree: a walk of its
// directories with a stat of each file, node_modules left out by name
// (a walk that honours .gitignore would also read and match its rules).
func BenchmarkStatWalk(b *testing.B) {
	t := benchRepo(b, 10_000)
	b.ResetTimer()
	defer cpu(b)()
	for b.Loop() {
		files := map[string]fileStat{}
		err := filepath.WalkDir(t.Root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				fi, err := d.Info()
				if err == nil {
					files[p] = fileStat{fi.Size(), fi.ModTime().UnixNano()}
				}
			}
			return nil
		})
		if err != nil || len(files) != 10_001 {
			b.Fatalf("%v %d", err, len(files))
		}
	}
}

// BenchmarkTracked is the listing of the tracked files a snapshot takes,
// read from the index file, beside git ls-files --cached which it
// replaced, and the finding of the work tree beside git rev-parse: the
// same repository of 10,000 files, in the same run.
func BenchmarkTracked(b *testing.B) {
	t := benchRepo(b, 10_000)
	b.Run("index", func(b *testing.B) {
		defer cpu(b)()
		for b.Loop() {
			if ps, err := trackedPaths(b.Context(), t); err != nil || len(ps) != 10_001 {
				b.Fatal(len(ps), err)
			}
		}
	})
	b.Run("git", func(b *testing.B) {
		defer cpu(b)()
		for b.Loop() {
			if _, err := git(b.Context(), t.Root, "ls-files", "-z", "--cached"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("find", func(b *testing.B) {
		defer cpu(b)()
		for b.Loop() {
			if _, err := Find(b.Context(), t.Root); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("find-git", func(b *testing.B) {
		defer cpu(b)()
		for b.Loop() {
			if _, err := git(b.Context(), t.Root, "rev-parse", "--show-toplevel", "--git-path", "index"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
