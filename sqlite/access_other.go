//go:build !unix

package sqlite

import "os"

// unwritable says why this process could not write the database at
// path, "" when it can. Without access(2), the file's read-only
// attribute is all there is to go by.
func unwritable(path string) string {
	fi, err := os.Stat(path)
	if err == nil && fi.Mode().Perm()&0o200 == 0 {
		return "the file is read-only"
	}
	return ""
}
