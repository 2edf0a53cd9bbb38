package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
)

// A Holder is a Format whose agent keeps its sessions in a database of
// its own rather than a file each: Holds names the file under root that
// holds session id, "" when none does.
type Holder interface {
	Holds(ctx context.Context, root, id string) (string, error)
}

// A Seeder is a Format whose writer writes only into a store the agent
// made: Seed makes, in root to (of a trial writing), an empty one of
// the schema of the agent's own in root from.
type Seeder interface {
	Seed(ctx context.Context, from, to string) error
}

// Restore writes session s of st, imported from f's agent, back into
// that agent's own store under its original id (the key's source id):
// in the file it came from when that is where the agent still looks for
// it, else where the agent keeps a session of that id, so that the
// agent resumes it by that id. f must be the agent's Writer too. The
// file is marked (handoff.Origin.Restore) so that importing it again,
// once the agent has gone on with it, adds only what the agent added,
// to s itself. A file of the session's still there is left alone: an
// ENOTFOUND-free EINVALID error says so, and nothing is written.
func Restore(ctx context.Context, st loom.Store, s *loom.Session, f Format, o handoff.Options) (*handoff.Report, error) {
	tool := f.Tool()
	w, ok := f.(handoff.Writer)
	if !ok {
		return nil, loom.Errorf(loom.EINVALID, "loom cannot write sessions of %s", tool)
	}
	id, ok := strings.CutPrefix(s.Key, tool+":")
	if !ok || s.Source == nil || s.Source.Tool != tool || id == "" || s.Kind != loom.KindMain {
		from := "loom's own"
		if s.Source != nil {
			from = "imported from " + s.Source.Tool
		}
		if s.Kind != loom.KindMain {
			from += ", a " + s.Kind
		}
		return nil, loom.Errorf(loom.EINVALID, "session %s is not a session of %s (it is %s): loom session handoff --to %s continues it there as a new one", s.ID, tool, from, tool)
	}
	keep := &handoff.Keep{ID: id, Stored: s.MessageCount}
	roots := f.Roots(o.Env, o.Home)
	if p, err := holding(ctx, f, roots, id); err != nil {
		return nil, err
	} else if p != "" {
		return nil, loom.Errorf(loom.EINVALID, "%s still has session %s (%s): nothing to restore", tool, id, p)
	}
	if p := s.Source.Path; p != "" && underAny(p, roots) {
		keep.Path = p
	}
	// A first writing, into a directory of its own, tells how many
	// messages the agent's reader makes of what the file holds of s.
	trial, err := os.MkdirTemp("", "loom-restore-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(trial)
	to := o
	to.Home, to.Env, to.Last, to.Keep = trial, func(string) string { return "" }, 0, &handoff.Keep{ID: id, Stored: keep.Stored}
	if sd, ok := f.(Seeder); ok && len(roots) > 0 {
		if into := f.Roots(to.Env, to.Home); len(into) > 0 {
			if err := sd.Seed(ctx, roots[0], into[0]); err != nil {
				return nil, err
			}
		}
	}
	rep, err := handoff.Run(ctx, st, s, w, to)
	if err != nil {
		return nil, err
	}
	res, err := read(ctx, f, Bundle{Files: []string{rep.Path}})
	if err != nil {
		return nil, fmt.Errorf("reading back what would be restored: %w", err)
	}
	keep.Messages = -1
	for _, x := range res.Sessions {
		if x.SourceID == id {
			keep.Messages = len(x.Messages)
		}
	}
	if keep.Messages < 0 {
		return nil, fmt.Errorf("%s's reader finds no session %s in what would be restored", tool, id)
	}
	o.Last, o.Keep = 0, keep
	rep, err = handoff.Run(ctx, st, s, w, o)
	if errors.Is(err, fs.ErrExist) {
		return nil, loom.Errorf(loom.EINVALID, "%s still has session %s (%v): nothing to restore", tool, id, err)
	}
	return rep, err
}

// holding is a file of f's under roots that holds session id, "" when
// none does: one whose path names the id (the agents name a session's
// file, or its directory, by its id), or, for an agent that names it by
// the id's first characters (Gemini CLI), whose start holds it whole.
func holding(ctx context.Context, f Format, roots []string, id string) (string, error) {
	short := id
	if len(short) > 8 {
		short = short[:8]
	}
	for _, root := range roots {
		if h, ok := f.(Holder); ok {
			if p, err := h.Holds(ctx, root, id); err != nil || p != "" {
				return p, err
			}
			continue
		}
		bundles, err := f.Bundles(ctx, root)
		var u *Unreadable
		if err != nil && !errors.As(err, &u) {
			return "", err
		}
		for _, b := range bundles {
			p := b.Name()
			switch {
			case strings.Contains(p, id):
				return p, nil
			case strings.Contains(filepath.Base(p), short) && startHolds(p, id):
				return p, nil
			}
		}
	}
	return "", nil
}

// startHolds reports whether the first 64 KB of file p hold s.
func startHolds(p, s string) bool {
	fh, err := os.Open(p)
	if err != nil {
		return false
	}
	defer fh.Close()
	buf := make([]byte, 64<<10)
	n, _ := io.ReadFull(fh, buf)
	return strings.Contains(string(buf[:n]), s)
}

// underAny reports whether p is one of roots or below one.
func underAny(p string, roots []string) bool {
	for _, r := range roots {
		if rel, err := filepath.Rel(r, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// restored is the source of session s, which `loom session restore-to`
// wrote back into its agent's store from x (its Origin.Restore names x):
// the first messages the file reads as stand for the first messages x
// holds, and what follows them is what the agent added since. Any other
// source is msgs as read.
func (im *Importer) restored(ctx context.Context, s *Session, x *loom.Session, msgs []*loom.Message) ([]*loom.Message, error) {
	o := s.Origin
	if o == nil || o.Restore == nil || o.SessionID != x.ID {
		return msgs, nil
	}
	r := o.Restore
	if r.Messages < 0 || r.Messages > len(msgs) || r.Stored < 0 || r.Stored > x.MessageCount {
		return msgs, nil
	}
	stored, err := im.Store.Messages(ctx, x.ID, loom.MessageQuery{Limit: max(r.Stored, 1), Oldest: true})
	if err != nil {
		return nil, err
	}
	if len(stored) < r.Stored {
		return msgs, nil
	}
	out := make([]*loom.Message, 0, r.Stored+len(msgs)-r.Messages)
	out = append(out, stored[:r.Stored]...)
	return append(out, msgs[restoredEnd(msgs, r.Messages, stored[:r.Stored]):]...), nil
}

// restoredEnd is where the n messages a restored file was written with
// end in msgs, its reading now. An agent that resumes the file may write
// messages of its own ahead of them: Gemini CLI rewrites the
// conversation with its session context first. Such a message, newer
// than every message loom held, is none of the n: it is skipped in the
// count, and left out (the messages loom holds stand for that part of
// the file), rather than taken for one of them, which would take the
// last restored message for one the agent added and store it twice.
func restoredEnd(msgs []*loom.Message, n int, stored []*loom.Message) int {
	var last time.Time
	for _, m := range stored {
		if m.CreatedAt.After(last) {
			last = m.CreatedAt
		}
	}
	i := 0
	for seen := 0; seen < n && i < len(msgs); i++ {
		if last.IsZero() || !msgs[i].CreatedAt.After(last) {
			seen++
		}
	}
	return i
}
