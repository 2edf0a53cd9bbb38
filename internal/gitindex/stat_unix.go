//go:build unix

package gitindex

import (
	"os"
	"syscall"
)

// inode is a file's inode number, 0 when it cannot be told.
func inode(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Ino)
	}
	return 0
}

// mine says whether the file is this process's user's (git refuses a
// repository of another owner unless configured to trust it).
func mine(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
