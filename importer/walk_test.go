package importer_test

import (
	"context"
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
// walked once, and a dangling link is passed over.
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
	var files []string
	err := importer.WalkDir(context.Background(), filepath.Join(base, "root"), func(p string, d fs.DirEntry, err error) error {
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
}
