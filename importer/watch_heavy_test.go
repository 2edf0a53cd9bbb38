package importer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsnotify/fsnotify"
)

// Watching a project (an Aider root) leaves out its dependency and
// build directories, which can hold thousands of directories and no
// session file.
func TestWatchLeavesOutHeavyDirs(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"src/pkg", "node_modules/a/b", "web/node_modules/c", ".git/objects"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Skip(err)
	}
	defer w.Close()
	wt := &watchTree{im: &Importer{}, w: w, roots: []string{root}, watched: map[string]bool{}, waiting: map[string]bool{}}
	wt.addRoots()
	for _, d := range []string{"", "src", "src/pkg", "web"} {
		if !wt.watched[filepath.Join(root, d)] {
			t.Errorf("%q not watched", d)
		}
	}
	if len(wt.watched) != 4 {
		t.Errorf("watched %v", wt.watched)
	}
}
