package gitindex

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// revParse is what git says of file: ok false where it says nothing
// (no HEAD, a file HEAD does not hold).
func revParse(t *testing.T, file string) (Probe, bool) {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "--show-toplevel", "--is-shallow-repository", "--absolute-git-dir", "HEAD", "HEAD:./"+filepath.Base(file))
	cmd.Dir = filepath.Dir(file)
	out, err := cmd.Output()
	if err != nil {
		return Probe{}, false
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(f) != 5 {
		t.Fatalf("rev-parse: %q", out)
	}
	return Probe{Top: f[0], Shallow: f[1] == "true", GitDir: f[2], Head: f[3], Blob: f[4]}, true
}

func realPath(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// same checks ProbeFile against git for file: where it answers, the
// answer is git's; answered says whether it did.
func same(t *testing.T, what, file string) (answered bool) {
	t.Helper()
	file = realPath(t, file)
	got, ok := ProbeFile(file)
	want, gitOK := revParse(t, file)
	if !ok {
		return false
	}
	if !gitOK {
		t.Fatalf("%s: %s probed %+v where git tells nothing", what, file, got)
	}
	got.GitDir, want.GitDir = realPath(t, got.GitDir), realPath(t, want.GitDir)
	if got != want {
		t.Fatalf("%s: %s probed\n%+v, git says\n%+v", what, file, got, want)
	}
	return true
}

// TestProbeAgreesWithGit: random histories and states of a repository
// (commits loose and packed, branches in packed-refs, a detached HEAD,
// changes staged and not, files added and removed, a linked work tree,
// a submodule, a shallow clone, GIT_DIR set), each file probed: where
// ProbeFile answers, its answer is git rev-parse's, and it answers in
// the plain states (a commit just made, a clone, after gc). Seeded;
// LOOM_GITINDEX_SEED replays.
func TestProbeAgreesWithGit(t *testing.T) {
	s := seed(t)
	t.Logf("seed %d (LOOM_GITINDEX_SEED=%d replays it)", s, s)
	r := rand.New(rand.NewPCG(s, 7))
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	os.MkdirAll(repo, 0o755)
	git(t, repo, "init", "-q", "-b", "main")
	var files []string
	write := func(top string, k int) {
		p := filepath.Join("d"+strconv.Itoa(k%4), "f"+strconv.Itoa(k)+".txt")
		os.MkdirAll(filepath.Join(top, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(top, p), fmt.Appendf(nil, "%d %d\n", k, r.IntN(1000)), 0o644)
		if top == repo && !strings.Contains(strings.Join(files, "\x00"), p) {
			files = append(files, p)
		}
	}
	for k := range 20 {
		write(repo, k)
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "one")
	probeAll := func(what, top string, must bool) {
		t.Helper()
		n := 0
		for _, f := range files {
			if same(t, what, filepath.Join(top, f)) {
				n++
			}
		}
		if must && n == 0 {
			t.Fatalf("%s: no file probed without git", what)
		}
		sameTree(t, what, top, must)
	}
	probeAll("a commit just made (loose objects)", repo, true)
	for step := range 12 {
		switch r.IntN(7) {
		case 0, 1:
			for range 1 + r.IntN(4) {
				write(repo, r.IntN(30))
			}
			git(t, repo, "add", "-A")
			git(t, repo, "commit", "-q", "-m", "c"+strconv.Itoa(step))
			probeAll("commit "+strconv.Itoa(step), repo, true)
		case 2:
			git(t, repo, "gc", "-q")
			// Answered unless a step before left the index's cache of
			// trees invalid (a reset).
			probeAll("after gc (packed objects, packed-refs)", repo, false)
		case 3:
			write(repo, r.IntN(30))
			git(t, repo, "add", "-A")
			probeAll("a change staged", repo, false)
			git(t, repo, "commit", "-q", "-m", "staged"+strconv.Itoa(step))
		case 4:
			write(repo, r.IntN(30))
			probeAll("a change not staged", repo, false)
		case 5:
			git(t, repo, "checkout", "-q", "--detach")
			probeAll("detached HEAD", repo, false)
			git(t, repo, "checkout", "-q", "main")
		case 6:
			git(t, repo, "rm", "-q", "--cached", "--", files[r.IntN(len(files))])
			probeAll("a file removed from the index", repo, false)
			git(t, repo, "reset", "-q")
		}
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "last")
	git(t, repo, "gc", "-q")
	probeAll("a commit in a pack, a branch in packed-refs", repo, true)
	wt := filepath.Join(root, "wt")
	git(t, repo, "worktree", "add", "-q", "-b", "w", wt)
	probeAll("linked work tree", wt, true)
	clone := filepath.Join(root, "clone")
	git(t, root, "clone", "-q", repo, clone)
	probeAll("clone", clone, true)
	shallow := filepath.Join(root, "shallow")
	git(t, root, "clone", "-q", "--depth", "1", "file://"+repo, shallow)
	probeAll("shallow clone", shallow, true)
	git(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", clone, "sub")
	git(t, repo, "commit", "-q", "-m", "sub")
	probeAll("submodule", filepath.Join(repo, "sub"), true)
	t.Setenv("GIT_DIR", filepath.Join(repo, ".git"))
	if p, ok := ProbeFile(realPath(t, filepath.Join(repo, files[0]))); ok {
		t.Fatalf("with GIT_DIR set, probed %+v", p)
	}
}

// TestTopAgreesWithGit: the work tree Top finds from a directory is
// git's (rev-parse --show-toplevel --absolute-git-dir) from the top,
// from a directory below it, in a linked work tree and a submodule;
// inside a git directory, in a bare repository, outside any, and with
// GIT_DIR set it declines.
func TestTopAgreesWithGit(t *testing.T) {
	root := realPath(t, t.TempDir())
	repo := filepath.Join(root, "repo")
	os.MkdirAll(filepath.Join(repo, "a", "b"), 0o755)
	git(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "a", "b", "f"), []byte("x\n"), 0o644)
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "1")
	wt := filepath.Join(root, "wt")
	git(t, repo, "worktree", "add", "-q", "-b", "w", wt)
	git(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", repo, "sub")
	for _, dir := range []string{repo, filepath.Join(repo, "a", "b"), wt, filepath.Join(wt, "a"), filepath.Join(repo, "sub"), filepath.Join(repo, "sub", "a", "b")} {
		top, gitDir, _, ok := Top(dir)
		if !ok {
			t.Fatalf("%s: not found", dir)
		}
		f := strings.Fields(git(t, dir, "rev-parse", "--show-toplevel", "--absolute-git-dir"))
		if top != f[0] || realPath(t, gitDir) != realPath(t, f[1]) {
			t.Errorf("%s: found %s %s, git %s %s", dir, top, gitDir, f[0], f[1])
		}
	}
	bare := filepath.Join(root, "bare.git")
	git(t, root, "clone", "-q", "--bare", repo, bare)
	for _, dir := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, ".git", "refs"), bare, root} {
		if top, _, _, ok := Top(dir); ok {
			t.Errorf("%s: found %s", dir, top)
		}
	}
	t.Setenv("GIT_DIR", filepath.Join(repo, ".git"))
	if top, _, _, ok := Top(repo); ok {
		t.Errorf("with GIT_DIR set: found %s", top)
	}
}

// sameTree checks ProbeTree against git rev-parse and git ls-tree -r at
// the top of a work tree.
func sameTree(t *testing.T, what, top string, must bool) {
	t.Helper()
	top = realPath(t, top)
	p, blobs, ok := ProbeTree(top)
	if !ok {
		if must {
			t.Fatalf("%s: the tree not probed without git", what)
		}
		return
	}
	f := strings.Fields(git(t, top, "rev-parse", "--is-shallow-repository", "--absolute-git-dir", "HEAD"))
	if p.Shallow != (f[0] == "true") || realPath(t, p.GitDir) != realPath(t, f[1]) || p.Head != f[2] || p.Top != top {
		t.Fatalf("%s: probed %+v, git says %v", what, p, f)
	}
	want := map[string]string{}
	for _, ent := range strings.Split(git(t, top, "ls-tree", "-r", "-z", "--full-tree", "HEAD"), "\x00") {
		meta, file, ok := strings.Cut(ent, "\t")
		fs := strings.Fields(meta)
		if ok && len(fs) == 3 && fs[1] == "blob" {
			want[file] = fs[2]
		}
	}
	if len(blobs) != len(want) {
		t.Fatalf("%s: %d files probed, git's tree has %d", what, len(blobs), len(want))
	}
	for f, b := range want {
		if blobs[f] != b {
			t.Fatalf("%s: %s probed %q, git's tree has %s", what, f, blobs[f], b)
		}
	}
}
