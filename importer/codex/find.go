package codex

import (
	"context"
	"os"
	"path/filepath"
	"slices"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

var _ importer.Finder = Format{}

// FindSession is FindRollout.
func (Format) FindSession(ctx context.Context, roots []string, id string) (string, error) {
	return FindRollout(ctx, roots, id)
}

// FindRollout returns the rollout file of the session with thread id id
// under roots (Format.Roots), "" when there is none. Codex names a
// rollout rollout-<time>-<thread id>.jsonl in a directory of its day, so
// the days are searched newest first: a session that just ended (what
// Codex's notify program is told of) is found after one day's listing.
// A rollout caught while Codex compresses it is its plain file, as
// Bundles lists it (plainTwin).
func FindRollout(ctx context.Context, roots []string, id string) (string, error) {
	if loom.ValidID(id) != nil {
		return "", loom.Errorf(loom.EINVALID, "codex: %q is not a thread id", loom.Truncate(id, 40))
	}
	for _, root := range roots {
		if p, err := findNewestFirst(ctx, root, id, 0); p != "" || err != nil {
			return p, err
		}
	}
	return "", nil
}

func findNewestFirst(ctx context.Context, dir, id string, depth int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if depth > 8 {
		return "", nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", nil
	}
	slices.Reverse(entries)
	for _, e := range entries {
		name := e.Name()
		if isRollout(name) {
			if fileID(name) == id {
				return plainTwin(filepath.Join(dir, name)), nil
			}
			continue
		}
		if importer.EntryMode(dir, e).IsDir() {
			if p, err := findNewestFirst(ctx, filepath.Join(dir, name), id, depth+1); p != "" || err != nil {
				return p, err
			}
		}
	}
	return "", nil
}
