package importer

import (
	"errors"
	"io/fs"
	"os"
	"strconv"

	"github.com/loomhq/loom/internal/safefile"
)

// Unreadable is the error a Format's Bundles returns, beside the bundles
// it found, when parts of its root could not be listed (a directory that
// cannot be read): each is a problem of the import and counts as a file
// that could not be read, and the bundles found are imported. Any other
// error of Bundles is a problem of the whole root.
type Unreadable struct {
	Problems []Problem
}

func (u *Unreadable) Error() string {
	if len(u.Problems) == 0 {
		return "nothing unreadable"
	}
	msg := u.Problems[0].String()
	if n := len(u.Problems) - 1; n > 0 {
		msg += " (and " + strconv.Itoa(n) + " more)"
	}
	return msg
}

// Add records that path could not be listed, for err.
func (u *Unreadable) Add(path string, err error) {
	u.Problems = append(u.Problems, PathProblem(path, err))
}

// Err is u as an error: nil when nothing was unreadable.
func (u *Unreadable) Err() error {
	if u == nil || len(u.Problems) == 0 {
		return nil
	}
	return u
}

// PathProblem is err about path as a problem: the path once, and the
// reason without the operation and path os.PathError repeats.
func PathProblem(path string, err error) Problem {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return Problem{File: pe.Path, Reason: pe.Err.Error()}
	}
	return Problem{File: path, Reason: err.Error()}
}

// checkRoot looks at a root before its tool's Bundles does. skip is a
// default root that does not exist: the tool is not installed. A root
// that cannot be read is a problem: one named (explicit) that does not
// exist or is neither a directory nor a regular file; a default one that
// is a dangling symbolic link, cannot be looked at, or is not a
// directory (each tool keeps its sessions in one).
func checkRoot(root string, explicit bool) (skip bool, p *Problem) {
	fi, err := os.Stat(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if li, lerr := os.Lstat(root); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
				target, _ := os.Readlink(root)
				return false, &Problem{File: root, Reason: "a symbolic link to " + target + ", which does not exist"}
			}
			if !explicit {
				return true, nil
			}
		}
		pp := PathProblem(root, err)
		return false, &pp
	}
	switch {
	case fi.IsDir():
		return false, nil
	case !explicit:
		return false, &Problem{File: root, Reason: "not a directory (" + safefile.Kind(fi.Mode()) + "); the tool keeps its sessions in a directory"}
	case !fi.Mode().IsRegular():
		return false, &Problem{File: root, Reason: "not a regular file (" + safefile.Kind(fi.Mode()) + "); only session files are read"}
	}
	return false, nil
}
