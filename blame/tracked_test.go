package blame

import (
	"context"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/loomhq/loom/internal/gitindex"
)

// TestTrackedFilesAsGit: the files a first blame matches other roots'
// edits against, read from the index file, are git ls-files' in a
// repository with random files staged, removed from the index and in
// conflict-free changes, in a linked work tree of it, in a submodule,
// and with GIT_DIR and GIT_WORK_TREE, or GIT_INDEX_FILE, naming them
// (where git is asked). Seeded; LOOM_TRACKED_SEED replays.
func TestTrackedFilesAsGit(t *testing.T) {
	rnd := rand.New(rand.NewPCG(testSeed(t, "LOOM_TRACKED_SEED"), 2))
	ctx := context.Background()
	r := newRepo(t)
	var files []string
	for i := range 30 + rnd.IntN(100) {
		p := "d" + strconv.Itoa(rnd.IntN(4)) + "/f" + strconv.Itoa(i) + ".go"
		r.write(p, "package d\n// "+strconv.Itoa(i)+"\n")
		files = append(files, p)
	}
	r.commit("one")
	sub := newRepo(t)
	sub.write("inner.go", "package inner\n")
	sub.commit("inner")
	r.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.dir, "vendor/sub")
	r.commit("the submodule")
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "-b", "w", wt)
	for _, top := range []string{r.dir, wt} {
		for _, f := range files {
			switch rnd.IntN(5) {
			case 0:
				gitIn(t, r, top, "rm", "-q", "--cached", "--", f)
			case 1:
				os.WriteFile(filepath.Join(top, "new-"+strconv.Itoa(rnd.IntN(1000))), []byte("n\n"), 0o644)
				gitIn(t, r, top, "add", "-A")
			}
		}
		gitIn(t, r, top, "update-index", "--index-version", strconv.Itoa(2+rnd.IntN(3)))
	}
	b := &Blamer{}
	check := func(what, file string) {
		t.Helper()
		g, _, err := b.Open(ctx, file)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		want := map[string]bool{}
		for _, p := range zPaths([]byte(gitIn(t, r, g.Dir, "ls-files", "-z"))) {
			want[p] = true
		}
		got := g.trackedFiles(ctx)
		if !maps.Equal(got, want) {
			t.Fatalf("%s: %d files read, git lists %d: %v", what, len(got), len(want), slices.Sorted(maps.Keys(got))[:min(5, len(got))])
		}
	}
	check("repository", filepath.Join(r.dir, files[0]))
	// A directory's files, as a summary lists them: git ls-files -z --
	// dir, whatever the directory is written as.
	g, _, err := b.Open(ctx, filepath.Join(r.dir, files[0]))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"", ".", "d0", "d1/", files[2], "d9", "d*", "vendor", "vendor/sub", "./d2", "d0/../d1"} {
		args := []string{"ls-files", "-z", "--"}
		if dir != "" {
			args = append(args, dir)
		}
		want := zPaths([]byte(r.git(args...)))
		got, err := g.filesUnder(ctx, dir)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("files under %q: %d read (%v), git lists %d", dir, len(got), err, len(want))
		}
	}
	check("linked work tree", filepath.Join(wt, files[0]))
	check("submodule", filepath.Join(r.dir, "vendor/sub/inner.go"))
	if _, ok := gitindex.Locate(filepath.Join(r.dir, "vendor/sub")); !ok {
		t.Fatal("the submodule's index was not located")
	}
	t.Setenv("GIT_DIR", filepath.Join(r.dir, ".git"))
	t.Setenv("GIT_WORK_TREE", r.dir)
	check("GIT_DIR", filepath.Join(r.dir, files[1]))
	os.Unsetenv("GIT_DIR")
	os.Unsetenv("GIT_WORK_TREE")
	other := filepath.Join(t.TempDir(), "index")
	t.Setenv("GIT_INDEX_FILE", other)
	gitIn(t, r, r.dir, "read-tree", "HEAD")
	gitIn(t, r, r.dir, "rm", "-q", "--cached", "--", files[2], files[3])
	check("GIT_INDEX_FILE", filepath.Join(r.dir, files[1]))
}

func gitIn(t *testing.T, r *repo, dir string, args ...string) string {
	t.Helper()
	saved := r.dir
	r.dir = dir
	defer func() { r.dir = saved }()
	return r.git(args...)
}

// testSeed is a new seed, or the one the environment variable env
// names; logged, so that a failure can be replayed.
func testSeed(t *testing.T, env string) uint64 {
	t.Helper()
	seed := rand.Uint64()
	if s := os.Getenv(env); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s: %v", env, err)
		}
	}
	t.Logf("seed %d (%s=%d replays it)", seed, env, seed)
	return seed
}
