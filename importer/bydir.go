package importer

import (
	"cmp"
	"slices"
)

// ByDir groups the one-file bundles a FileBundles found into one bundle
// per session, for a tool that keeps a session as several files: dirOf
// names the session's directory of each file. Bundles come in the order
// their first file was found; each bundle's files are sorted by rank
// (the file that names the bundle first), and a bundle whose first file
// keep refuses (a session without its main file) is left out.
func ByDir(files []Bundle, dirOf func(path string) string, rank func(path string) string, keep func(first string) bool) []Bundle {
	byDir := map[string]*Bundle{}
	var order []string
	for _, b := range files {
		dir := dirOf(b.Name())
		c := byDir[dir]
		if c == nil {
			c = &Bundle{}
			byDir[dir] = c
			order = append(order, dir)
		}
		c.Files = append(c.Files, b.Files...)
	}
	out := make([]Bundle, 0, len(order))
	for _, dir := range order {
		b := byDir[dir]
		slices.SortStableFunc(b.Files, func(x, y string) int { return cmp.Compare(rank(x), rank(y)) })
		if keep(b.Files[0]) {
			out = append(out, *b)
		}
	}
	return out
}
