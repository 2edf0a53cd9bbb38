package importer_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// WalkDir follows symbolic links as a user expects of a dotfile
// manager's tree: a linked root, a linked directory below it and a linked
// file are walked as if they were there, a link back up the tree is
// walked once, and a dangling link is not followed but passed to fn
// with its error.
func TestWalkDirFollowsLinks(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	for _, d := range []string{"real/projects/a", "elsewhere/b", "files"} {
		importertest.MkdirAll(t, filepath.Join(base, d))
	}
	for _, f := range []string{"real/projects/a/1.jsonl", "elsewhere/b/2.jsonl", "files/3.jsonl"} {
		importertest.WriteFile(t, filepath.Join(base, f), []byte("{}\n"), 0o644)
	}
	links := map[string]string{
		"real/projects/b":         filepath.Join(base, "elsewhere/b"),
		"real/projects/a/3.jsonl": filepath.Join(base, "files/3.jsonl"),
		"real/projects/a/loop":    real,
		"real/projects/gone":      filepath.Join(base, "nowhere"),
		"root":                    real,
	}
	for l, to := range links {
		if err := os.Symlink(to, filepath.Join(base, l)); err != nil {
			t.Fatal(err)
		}
	}
	var files, nowhere []string
	err := importer.WalkDir(context.Background(), filepath.Join(base, "root"), func(p string, d fs.DirEntry, err error) error {
		if err != nil && d != nil && d.Type()&fs.ModeSymlink != 0 && errors.Is(err, importer.ErrDanglingLink) {
			nowhere = append(nowhere, strings.TrimPrefix(p, base+"/"))
			return nil
		}
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, strings.TrimPrefix(p, base+"/"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"root/projects/a/1.jsonl", "root/projects/a/3.jsonl", "root/projects/b/2.jsonl"}
	if !slices.Equal(files, want) {
		t.Errorf("walked %q, want %q", files, want)
	}
	if !slices.Equal(nowhere, []string{"root/projects/gone"}) {
		t.Errorf("links to nowhere passed to fn: %q, want the dangling one", nowhere)
	}
}

// A link that leads nowhere, named as a session file of the tool, is
// one problem line saying why (its target is gone, or the links loop);
// one named as something else is passed over; the sessions beside them
// are read.
func TestFileBundlesNameLinksToNowhere(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("kept.jsonl")
	link(filepath.Join(dir, "gone.jsonl"), "dangling.jsonl")
	link("loop-b.jsonl", "loop-a.jsonl")
	link("loop-a.jsonl", "loop-b.jsonl")
	link(filepath.Join(dir, "nothing"), "notes")
	bs, err := importer.FileBundles(t.Context(), "t", dir, func(p string, _ fs.DirEntry) bool { return strings.HasSuffix(p, ".jsonl") })
	if len(bs) != 1 || bs[0].Files[0] != filepath.Join(dir, "kept.jsonl") {
		t.Errorf("bundles %+v, want kept.jsonl alone", bs)
	}
	var u *importer.Unreadable
	if !errors.As(err, &u) {
		t.Fatalf("err %v, want the links named", err)
	}
	got := map[string]string{}
	for _, p := range u.Problems {
		got[filepath.Base(p.File)] = p.Reason
	}
	want := map[string]error{"dangling.jsonl": importer.ErrDanglingLink, "loop-a.jsonl": importer.ErrLinkLoop, "loop-b.jsonl": importer.ErrLinkLoop}
	if len(got) != len(want) {
		t.Errorf("problems %v, want one for each of %v", got, want)
	}
	for name, why := range want {
		if got[name] != why.Error() {
			t.Errorf("%s: %q, want %q", name, got[name], why)
		}
	}
}
