package importer

import (
	"bytes"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// One rule for bad input, whatever the agent (docs/import.md, "Bad
// input"): a file that cannot be read at all is one line that names it
// and says why, counted as a file that could not be read (the import
// exits 1), and everything else is imported; a file read in part gives
// its problems and exits 0; a file of 0 bytes holds nothing yet: one
// line, exit 0, and it is read once it is written to. The readers find
// and read; the import applies the rule to what they return, so that
// it is the same for every reader.

// DirReason is why a directory in the place of a session file is not
// read: the reason of its one line.
const DirReason = "a directory where a session file is expected; only files are read"

// emptyReason is why a file of 0 bytes (or white space only) gives no
// session.
const emptyReason = "empty: no session in it yet"

// DirInPlace records in u that path, where a reader looks for a session
// file, is a directory, and says whether it is. A reader whose Bundles
// looks for a file by its name calls it when the name is not a regular
// file.
func (u *Unreadable) DirInPlace(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return false
	}
	u.Problems = append(u.Problems, Problem{File: path, Reason: DirReason})
	return true
}

// sessionLike says whether a directory, by its name, could be taken for
// a session file by a reader that keeps files so named: a dot after its
// first character, as in a file's extension.
func sessionLike(name string) bool {
	return len(name) > 1 && strings.Contains(name[1:], ".")
}

// nothingRead opens the line of a file from which nothing could be read.
const nothingRead = "nothing read: "

// unreadable is the one problem of a file from which nothing could be
// read: the first of its problems, and how many more there were.
func unreadable(name string, ps []Problem) Problem {
	p := ps[0]
	if p.File == "" {
		p.File = name
	}
	if len(ps) == 1 && strings.HasPrefix(p.Reason, nothingRead) {
		return p // made one line already
	}
	if p.Line > 0 {
		p.Reason = nothingRead + "line " + strconv.Itoa(p.Line) + ": " + p.Reason
		p.Line = 0
	} else {
		p.Reason = nothingRead + p.Reason
	}
	if n := len(ps) - 1; n > 0 {
		p.Reason += " (and " + strconv.Itoa(n) + " more problems)"
	}
	return p
}

// NamedDir is for a reader's own walk: d, at path, is a directory that
// the reader would take for a session file by its name (named says so).
// Such a directory is one line of u, and NamedDir says the walk should
// skip it.
func (u *Unreadable) NamedDir(path string, d fs.DirEntry, named bool) bool {
	if d == nil || !d.IsDir() || !named {
		return false
	}
	u.Problems = append(u.Problems, Problem{File: path, Reason: DirReason})
	return true
}

// Empty records in r the one line of file, a file of the bundle, when
// it holds nothing yet (0 bytes, or white space only), and says whether
// it does: a reader of a bundle of several files calls it for a file
// that gave it nothing, which the import cannot tell once the other
// files gave sessions.
func (r *Result) Empty(file string) bool {
	if !isEmpty(file) {
		return false
	}
	r.Problemf(file, 0, emptyReason)
	return true
}

// notText is why a file of a format any text is could not be read.
const notText = "not text (a NUL byte, or bytes that are not UTF-8)"

// IsText says whether b is text: UTF-8 without a NUL byte. For a format
// any text is (Markdown), bytes that are not are what garbage is.
func IsText(b []byte) bool {
	return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0
}

// NotText records in r that file, of a format any text is, is not text
// (IsText): one line, a file that could not be read.
func (r *Result) NotText(file string) {
	r.Unreadablef(file, 0, nothingRead+notText)
}
