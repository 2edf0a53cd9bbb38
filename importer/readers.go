package importer

import (
	"context"
	"fmt"
	"io/fs"
	"unicode/utf8"

	"github.com/loomhq/loom"
)

// What the format readers share beyond reading lines: finding one-file
// sessions under a root, naming skipped types, and where a fork leaves
// its parent.

// FileBundles is the Bundles of a format whose sessions are one file
// each: root itself when it is a file (read whatever its name), else
// every regular file below it that keep accepts, one bundle each, in
// lexical order. Symbolic links are followed (WalkDir); directories
// that cannot be listed below root are reported beside the bundles
// found (Unreadable). A root that does not exist has no bundles.
func FileBundles(ctx context.Context, tool, root string, keep func(path string, d fs.DirEntry) bool) ([]Bundle, error) {
	return fileBundles(ctx, tool, root, nil, keep)
}

// fileBundles is FileBundles, passing over the directories below root
// that skip names.
func fileBundles(ctx context.Context, tool, root string, skip map[string]bool, keep func(path string, d fs.DirEntry) bool) ([]Bundle, error) {
	if bs, dir, err := FileRoot(tool, root); !dir {
		return bs, err
	}
	var out []Bundle
	var unreadable Unreadable
	err := WalkDir(ctx, root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			if IsLink(d) {
				// A link that leads nowhere: one line where it is named
				// as a session file of the tool, else nothing of the
				// tool's is lost.
				if keep(path, d) {
					unreadable.Add(path, err)
				}
				return nil
			}
			// A directory that cannot be listed is a problem of the
			// import; the rest is still read.
			unreadable.Add(path, err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() && path != root && skip[d.Name()] {
			return fs.SkipDir
		}
		if d.IsDir() && path != root && sessionLike(d.Name()) && keep(path, d) {
			// Named as a session file, and no file: one line for it,
			// and nothing in it is read.
			unreadable.Problems = append(unreadable.Problems, Problem{File: path, Reason: DirReason})
			return fs.SkipDir
		}
		if d.Type().IsRegular() && keep(path, d) {
			out = append(out, Bundle{Files: []string{path}})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: listing %s: %w", tool, root, err)
	}
	return out, unreadable.Err()
}

// TooLong is the tooLong of Lines for file: each line over MaxLine is a
// problem of r at its number.
func (r *Result) TooLong(file string) func(n int) {
	return func(n int) {
		r.Problemf(file, n, fmt.Sprintf("line longer than %d bytes, skipped", MaxLine))
	}
}

// MaxTypeName bounds the type names that skipped counts are keyed by.
const MaxTypeName = 64

// Clip shortens s to at most n bytes, on a rune boundary, marking the
// cut with "…".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// ForkTurn is the number of turns a fork shares whole with its parent,
// both given from their first message: the turns opened in their
// common messages (by id), less the last of them when either side goes
// on inside it.
func ForkTurn(parent, fork []*loom.Message) int {
	d := 0
	for d < len(parent) && d < len(fork) && parent[d].ID == fork[d].ID {
		d++
	}
	turns := 0
	for _, m := range fork[:d] {
		if m.Role == loom.RoleUser {
			turns++
		}
	}
	opens := func(msgs []*loom.Message) bool { return d == len(msgs) || msgs[d].Role == loom.RoleUser }
	if turns > 0 && (!opens(parent) || !opens(fork)) {
		turns--
	}
	return turns
}

// LastModelReply is the last assistant message of msgs that names its
// model, nil for none: whose model (and provider) a session is said to
// use where its file names none of its own.
func LastModelReply(msgs []*loom.Message) *loom.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Role == loom.RoleAssistant && m.Model != "" {
			return m
		}
	}
	return nil
}
