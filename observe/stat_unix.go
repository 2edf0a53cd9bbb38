//go:build unix

package observe

import (
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// statDir takes the stats of paths, all in one directory under root,
// from the directory opened once: the kernel does not walk the
// directory's path again for each file, the most of a snapshot's time
// on a large tree.
func statDir(root string, paths []string, stats []fileStat, ok []bool) {
	fd, err := unix.Open(filepath.Join(root, filepath.FromSlash(path.Dir(paths[0]))), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		statEach(root, paths, stats, ok)
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	for i, p := range paths {
		if unix.Fstatat(fd, path.Base(p), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			stats[i], ok[i] = fileStat{Size: st.Size, Mtime: st.Mtim.Nano()}, true
		}
	}
}
