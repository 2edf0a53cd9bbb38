//go:build !unix

package observe

// statDir takes the stats of paths, all in one directory under root.
func statDir(root string, paths []string, stats []fileStat, ok []bool) {
	statEach(root, paths, stats, ok)
}
