package blame

import (
	"context"
	"os"
	"slices"
	"strconv"

	"github.com/loomhq/loom"
)

// FileLines are the lines of one file that a turn of a session wrote
// and that still live in it (Lines its agent's, Mixed those a human
// changed since), as the work tree has the file.
type FileLines struct {
	Path  string `json:"path"`
	Repo  string `json:"repo"`
	File  string `json:"file"`
	Lines []int  `json:"lines"`
	Mixed []int  `json:"mixed,omitempty"`
}

// TurnLines are the lines that turn of session wrote and that still
// live, file by file: the files its edits changed, blamed where they
// are now. A file that is gone, or outside a work tree, has none.
func (b *Blamer) TurnLines(ctx context.Context, sessionID string, turn int) ([]FileLines, error) {
	if err := b.index(ctx); err != nil {
		return nil, err
	}
	es, err := b.Store.Edits(ctx, loom.EditQuery{UserID: b.UserID, SessionID: sessionID})
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range es {
		if e.Turn == turn && (e.Op == loom.EditWrite || e.Op == loom.EditChange) && !slices.Contains(paths, e.Path) {
			paths = append(paths, e.Path)
		}
	}
	var out []FileLines
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		res, err := b.File(ctx, p, "")
		if err != nil {
			if c := loom.ErrorCode(err); c == loom.EINVALID || c == loom.ENOTFOUND {
				continue
			}
			return nil, err
		}
		fl := FileLines{Path: p, Repo: res.Repo, File: res.Path}
		for _, l := range res.Lines {
			if l.SessionID != sessionID || l.Turn != turn {
				continue
			}
			if l.Kind == Mixed {
				fl.Mixed = append(fl.Mixed, l.N)
			} else {
				fl.Lines = append(fl.Lines, l.N)
			}
		}
		if len(fl.Lines)+len(fl.Mixed) > 0 {
			out = append(out, fl)
		}
	}
	return out, nil
}

// Ranges writes line numbers (in order) as ranges: 3-8, 12.
func Ranges(ns []int) []string {
	var out []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j > i {
			out = append(out, itoa(ns[i])+"-"+itoa(ns[j]))
		} else {
			out = append(out, itoa(ns[i]))
		}
		i = j + 1
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
