package observe

import (
	"os"
	"path/filepath"
)

// statEach takes the stats of paths under root one by one.
func statEach(root string, paths []string, stats []fileStat, ok []bool) {
	for i, p := range paths {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
		if err == nil && fi.Mode().IsRegular() {
			stats[i], ok[i] = fileStat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}, true
		}
	}
}
