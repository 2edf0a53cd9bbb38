package observe

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTakeListsAsGit: a snapshot holds the regular files git lists,
// tracked (read from the index file itself) and untracked, in a
// repository, a linked work tree of it, with GIT_INDEX_FILE naming
// another index, and from After's tree without its index named:
// random files staged, removed from the index, changed and left, the
// index's version chosen at random. Seeded; LOOM_OBSERVE_SEED replays.
func TestTakeListsAsGit(t *testing.T) {
	seed := rand.Uint64()
	if s := os.Getenv("LOOM_OBSERVE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (LOOM_OBSERVE_SEED=%d replays it)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 1))
	ctx := context.Background()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	os.MkdirAll(repo, 0o755)
	git(repo, "init", "-q")
	var files []string
	for i := range 50 + r.IntN(150) {
		p := filepath.Join("d"+strconv.Itoa(r.IntN(6)), "e"+strconv.Itoa(r.IntN(3)), "f"+strconv.Itoa(i)+".txt")
		os.MkdirAll(filepath.Join(repo, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(repo, p), []byte(strconv.Itoa(i)+"\n"), 0o644)
		files = append(files, p)
	}
	os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("*.ign\n"), 0o644)
	git(repo, "add", "-A")
	git(repo, "commit", "-qm", "one")
	git(repo, "worktree", "add", "-q", "-b", "w", filepath.Join(root, "wt"))
	for _, top := range []string{repo, filepath.Join(root, "wt")} {
		for _, f := range files {
			switch r.IntN(6) {
			case 0:
				os.WriteFile(filepath.Join(top, f), []byte("changed\n"), 0o644)
				git(top, "add", "--", f)
			case 1:
				git(top, "rm", "-q", "--cached", "--", f)
			case 2:
				os.WriteFile(filepath.Join(top, f+".new"), []byte("new\n"), 0o644)
			case 3:
				os.WriteFile(filepath.Join(top, f+".ign"), []byte("ignored\n"), 0o644)
			}
		}
		git(top, "update-index", "--index-version", strconv.Itoa(2+r.IntN(3)))
	}
	check := func(what string, tree Tree) {
		t.Helper()
		s, err := Take(ctx, tree, false)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		want := map[string]bool{}
		for _, p := range strings.Split(git(tree.Root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"), "\x00") {
			if fi, err := os.Lstat(filepath.Join(tree.Root, p)); p != "" && err == nil && fi.Mode().IsRegular() {
				want[p] = true
			}
		}
		for p := range s.Files {
			if !want[p] {
				t.Errorf("%s: %s in the snapshot, not listed by git", what, p)
			}
		}
		for p := range want {
			if _, ok := s.Files[p]; !ok {
				t.Errorf("%s: %s listed by git, not in the snapshot", what, p)
			}
		}
	}
	for _, top := range []string{repo, filepath.Join(root, "wt")} {
		tree, err := Find(ctx, filepath.Join(top, "d0"))
		if err != nil {
			t.Fatal(err)
		}
		check(top, tree)
		check(top+" without its index named", Tree{Root: tree.Root})
	}
	// Another index: git's listing is of that index, and so is the
	// snapshot's.
	other := filepath.Join(root, "other-index")
	t.Setenv("GIT_INDEX_FILE", other)
	git(repo, "read-tree", "HEAD~0")
	os.WriteFile(filepath.Join(repo, "only-there.ign"), []byte("x\n"), 0o644)
	git(repo, "add", "-f", "only-there.ign")
	tree, err := Find(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Index != other {
		t.Fatalf("GIT_INDEX_FILE: the tree's index is %s", tree.Index)
	}
	check("GIT_INDEX_FILE", tree)
	check("GIT_INDEX_FILE, without its index named", Tree{Root: repo})
}
