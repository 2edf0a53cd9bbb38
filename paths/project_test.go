package paths

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
)

// realTempDir returns a fresh temporary directory with its symlinks
// resolved, since DetectProject reports resolved roots and the system
// temporary directory is itself a symlink on some platforms.
func realTempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func mkdirs(t *testing.T, elem ...string) string {
	t.Helper()
	p := filepath.Join(elem...)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sha16(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

// outsideAnyRepo skips the test when dir's ancestors hold a .git entry,
// which would make "outside any repository" untestable there.
func outsideAnyRepo(t *testing.T, dir string) {
	t.Helper()
	for cur := dir; ; cur = filepath.Dir(cur) {
		if _, err := os.Stat(filepath.Join(cur, ".git")); err == nil {
			t.Skipf("temporary directory %s is inside a repository at %s", dir, cur)
		}
		if filepath.Dir(cur) == cur {
			return
		}
	}
}

func TestDetectProject(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, base string) (dir, root string)
	}{
		{
			name: "nested subdirectory of a clone",
			setup: func(t *testing.T, base string) (string, string) {
				root := mkdirs(t, base, "myrepo")
				mkdirs(t, root, ".git")
				return mkdirs(t, root, "a", "b", "c"), root
			},
		},
		{
			name: "top of a clone",
			setup: func(t *testing.T, base string) (string, string) {
				root := mkdirs(t, base, "myrepo")
				mkdirs(t, root, ".git")
				return root, root
			},
		},
		{
			name: "worktree with a .git file",
			setup: func(t *testing.T, base string) (string, string) {
				root := mkdirs(t, base, "wt")
				writeFile(t, filepath.Join(root, ".git"), "gitdir: /elsewhere/.git/worktrees/wt\n")
				return mkdirs(t, root, "pkg", "sub"), root
			},
		},
		{
			name: "submodule inside a clone is its own project",
			setup: func(t *testing.T, base string) (string, string) {
				outer := mkdirs(t, base, "outer")
				mkdirs(t, outer, ".git")
				sub := mkdirs(t, outer, "vendor", "lib")
				writeFile(t, filepath.Join(sub, ".git"), "gitdir: ../../.git/modules/lib\n")
				return mkdirs(t, sub, "src"), sub
			},
		},
		{
			name: "outside any repository",
			setup: func(t *testing.T, base string) (string, string) {
				outsideAnyRepo(t, base)
				dir := mkdirs(t, base, "plain", "dir")
				return dir, dir
			},
		},
		{
			name: "path with dot segments",
			setup: func(t *testing.T, base string) (string, string) {
				root := mkdirs(t, base, "r")
				mkdirs(t, root, ".git")
				mkdirs(t, root, "x", "y")
				return root + "/x/../x/./y/", root
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, root := tt.setup(t, realTempDir(t))
			p, err := DetectProject(dir)
			if err != nil {
				t.Fatalf("DetectProject(%q): %v", dir, err)
			}
			want := loom.Project{ID: sha16(root), Name: filepath.Base(root), Root: root}
			if p != want {
				t.Errorf("DetectProject(%q) =\n %+v\nwant\n %+v", dir, p, want)
			}
		})
	}
}

func TestDetectProjectIDIsSHA256Prefix(t *testing.T) {
	root := mkdirs(t, realTempDir(t), "proj")
	mkdirs(t, root, ".git")
	p, err := DetectProject(root)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(root))
	want := hex.EncodeToString(sum[:])[:16]
	if p.ID != want {
		t.Errorf("ID = %q, want %q", p.ID, want)
	}
	if len(p.ID) != 16 {
		t.Errorf("len(ID) = %d, want 16", len(p.ID))
	}
	if got := ProjectID(root); got != want {
		t.Errorf("ProjectID = %q, want %q", got, want)
	}
}

func TestDetectProjectSameNameDifferentRoots(t *testing.T) {
	base := realTempDir(t)
	a := mkdirs(t, base, "one", "app")
	b := mkdirs(t, base, "two", "app")
	mkdirs(t, a, ".git")
	mkdirs(t, b, ".git")
	pa, err := DetectProject(a)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := DetectProject(b)
	if err != nil {
		t.Fatal(err)
	}
	if pa.Name != "app" || pb.Name != "app" {
		t.Errorf("names = %q, %q, want both %q", pa.Name, pb.Name, "app")
	}
	if pa.ID == pb.ID {
		t.Errorf("two roots share ID %q", pa.ID)
	}
}

func TestDetectProjectSymlinkGivesSameID(t *testing.T) {
	base := realTempDir(t)
	root := mkdirs(t, base, "real")
	mkdirs(t, root, ".git")
	sub := mkdirs(t, root, "sub")
	link := filepath.Join(base, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	direct, err := DetectProject(sub)
	if err != nil {
		t.Fatal(err)
	}
	viaLink, err := DetectProject(filepath.Join(link, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if direct != viaLink {
		t.Errorf("via symlink %+v, direct %+v", viaLink, direct)
	}
	if direct.Root != root {
		t.Errorf("Root = %q, want %q", direct.Root, root)
	}
}

func TestDetectProjectRelativeDir(t *testing.T) {
	root := mkdirs(t, realTempDir(t), "rel")
	mkdirs(t, root, ".git")
	mkdirs(t, root, "inner")
	t.Chdir(filepath.Join(root, "inner"))
	for _, dir := range []string{"", ".", "../inner"} {
		p, err := DetectProject(dir)
		if err != nil {
			t.Fatalf("DetectProject(%q): %v", dir, err)
		}
		if p.Root != root {
			t.Errorf("DetectProject(%q).Root = %q, want %q", dir, p.Root, root)
		}
	}
}

func TestDetectProjectErrors(t *testing.T) {
	base := realTempDir(t)
	file := filepath.Join(base, "file.txt")
	writeFile(t, file, "x")
	if _, err := DetectProject(filepath.Join(base, "missing")); err == nil {
		t.Error("DetectProject(missing) succeeded, want error")
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("DetectProject(missing) = %v, want a not-exist error", err)
	}
	_, err := DetectProject(file)
	if code := loom.ErrorCode(err); code != loom.EINVALID {
		t.Errorf("DetectProject(file) code = %q (%v), want %q", code, err, loom.EINVALID)
	}
}

// ProjectOf follows DetectProject for a directory on this machine, and
// takes a directory that is not here (another machine's, a deleted
// one) as its own root.
func TestProjectOf(t *testing.T) {
	root := mkdirs(t, realTempDir(t), "proj")
	mkdirs(t, root, ".git")
	if p := ProjectOf(mkdirs(t, root, "sub")); p.Root != root || p.ID != ProjectID(root) || p.Name != "proj" {
		t.Errorf("a directory in a work tree: %+v, want root %s", p, root)
	}
	gone := "/nowhere/here/api/"
	if p := ProjectOf(gone); p.Root != "/nowhere/here/api" || p.ID != ProjectID("/nowhere/here/api") || p.Name != "api" {
		t.Errorf("a directory not on this machine: %+v", p)
	}
}
