package importer

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/loomhq/loom"
)

// Held says how much of a source bundle the store holds.
type Held string

const (
	// HeldWhole: every file of the bundle is as the last import
	// recorded it, so the store holds all it had.
	HeldWhole Held = "whole"
	// HeldBehind: imported, but a file changed (or was added) since.
	HeldBehind Held = "behind"
	// HeldNone: never imported.
	HeldNone Held = "none"
)

// Coverage is one bundle of a tool's files compared with what the
// store recorded of them, without reading them: by their sizes and
// modification times, as an import tells an unchanged file.
type Coverage struct {
	Tool   string
	Bundle Bundle
	// Size is the bundle's files' total size, ModTime the newest of
	// their modification times.
	Size    int64
	ModTime time.Time
	Held    Held
	// SourceID and SessionID name the session the bundle holds and its
	// copy in loom, when the import recorded one (not for a database
	// of many sessions); ImportedAt is when the bundle was last
	// imported (zero: never).
	SourceID, SessionID string
	ImportedAt          time.Time
}

// Cover compares every bundle of t, found under its roots (directory
// entries only, as an import finds them), with the import records of
// user in st. A root that does not exist has no bundles; one that
// cannot be listed is an error.
func Cover(ctx context.Context, st loom.Store, user string, t Target) ([]Coverage, error) {
	tool := t.Format.Tool()
	recs, err := st.ImportedFiles(ctx, user, tool)
	if err != nil {
		return nil, err
	}
	known := make(map[string]loom.ImportedFile, len(recs))
	for _, r := range recs {
		known[r.Path] = r
	}
	var out []Coverage
	for _, root := range t.Roots {
		bundles, err := t.Format.Bundles(ctx, root)
		var u *Unreadable
		if err != nil && !errors.As(err, &u) {
			return nil, err
		}
		for _, b := range bundles {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			c := Coverage{Tool: tool, Bundle: b, Held: HeldWhole}
			main, seen := known[b.Name()]
			if seen {
				c.SourceID, c.SessionID, c.ImportedAt = main.SourceID, main.SessionID, main.ImportedAt
			}
			files := 0
			for _, p := range b.Files {
				fi, err := os.Stat(p)
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil || !fi.Mode().IsRegular() {
					continue
				}
				files++
				c.Size += fi.Size()
				if mt := fi.ModTime().UTC(); mt.After(c.ModTime) {
					c.ModTime = mt
				}
				k, ok := known[p]
				if !ok || k.Size != fi.Size() || !k.ModTime.Equal(fi.ModTime().UTC()) {
					c.Held = HeldBehind
				}
				if ok && k.ImportedAt.After(c.ImportedAt) {
					c.ImportedAt = k.ImportedAt
				}
			}
			if files == 0 {
				continue // gone since it was listed
			}
			if !seen {
				c.Held = HeldNone
			}
			out = append(out, c)
		}
	}
	return out, nil
}
