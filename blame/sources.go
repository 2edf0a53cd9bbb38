package blame

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
)

// Source is one store whose sessions a blame reads: one's own, or a
// team's on this machine (its members' shared sessions, each of which
// names its member: loom.FileEdit.Member, from Session.Member).
type Source struct {
	// Team names the team whose store it is ("" for one's own).
	Team  string
	Store loom.EditStore
	// Roots lists the roots Store's sessions recorded (nil: none).
	Roots loom.RootLister
}

// Sources are the edit indexes of several stores read as one, so that
// a file's lines are credited to the sessions of every store that wrote
// them: one's own first, then the teams'. An edit that two stores hold
// (one's own session as the team has it, or a fork of a teammate's
// session made into one's own store, whose copied messages hold the
// teammate's edits) is credited to the later store's session: the
// team's copy, which names its member.
type Sources struct {
	List []Source
	// Me is the name one's own sessions are credited to (one's name in
	// the team): an edit of a store of no team names it as its member.
	Me string

	mu sync.Mutex
	// owner is the source of each session the edits read came from.
	owner map[string]int
}

// Index brings every store's edit index up to date; a store open
// read-only blames with what it has indexed.
func (u *Sources) Index(ctx context.Context) error {
	for _, s := range u.List {
		if _, err := fileedit.Index(ctx, s.Store); err != nil && loom.ErrorCode(err) != loom.EINVALID {
			return err
		}
	}
	return nil
}

// UnindexedEdits is nothing: Index brings each store up to date.
func (u *Sources) UnindexedEdits(context.Context, int) ([]loom.EditSource, error) { return nil, nil }

// PutEdits does nothing: see Index.
func (u *Sources) PutEdits(context.Context, []loom.EditSource, []loom.IndexedEdit) error { return nil }

// Edits returns the edits q selects from every store, oldest first,
// each edit once.
func (u *Sources) Edits(ctx context.Context, q loom.EditQuery) ([]loom.FileEdit, error) {
	var all []loom.FileEdit
	from := []int{}
	for i, s := range u.List {
		es, err := s.Store.Edits(ctx, q)
		if err != nil {
			return nil, err
		}
		all = append(all, es...)
		for range es {
			from = append(from, i)
		}
	}
	if q.Bare {
		// Edits without their sessions: what files a repository's
		// edits touched; the same twice changes nothing there.
		return all, nil
	}
	// The same edit in two stores: the later store's.
	keep := map[string]int{}
	for i, e := range all {
		keep[fmt.Sprint(e.At.UnixNano(), "\x00", e.PartID, "\x00", e.N, "\x00", e.Op, "\x00", e.Path)] = i
	}
	out := make([]loom.FileEdit, 0, len(keep))
	u.mu.Lock()
	if u.owner == nil {
		u.owner = map[string]int{}
	}
	for i, e := range all {
		if keep[fmt.Sprint(e.At.UnixNano(), "\x00", e.PartID, "\x00", e.N, "\x00", e.Op, "\x00", e.Path)] != i {
			continue
		}
		if e.Member == "" && u.List[from[i]].Team == "" {
			e.Member = u.Me
		}
		out = append(out, e)
		if _, ok := u.owner[e.SessionID]; !ok || from[i] > u.owner[e.SessionID] {
			u.owner[e.SessionID] = from[i]
		}
	}
	u.mu.Unlock()
	slices.SortStableFunc(out, func(a, b loom.FileEdit) int { return a.At.Compare(b.At) })
	return out, nil
}

// ProjectRoots are the roots every store's sessions of the project
// recorded.
func (u *Sources) ProjectRoots(ctx context.Context, userID, projectID string) ([]string, error) {
	var out []string
	for _, s := range u.List {
		rs, err := s.Store.ProjectRoots(ctx, userID, projectID)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// RecordedRoots are the roots every store's sessions recorded (a
// teammate's clone, at a path of their machine).
func (u *Sources) RecordedRoots(ctx context.Context, userID string) ([]loom.RecordedRoot, error) {
	var out []loom.RecordedRoot
	at := map[string]int{}
	for _, s := range u.List {
		if s.Roots == nil {
			continue
		}
		rs, err := s.Roots.RecordedRoots(ctx, userID)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			if i, ok := at[r.Root]; ok {
				out[i].Sessions += r.Sessions
				continue
			}
			at[r.Root] = len(out)
			out = append(out, r)
		}
	}
	return out, nil
}

// Holds reports which source's store the edits of session id came from
// (-1 for none read).
func (u *Sources) Holds(id string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if i, ok := u.owner[id]; ok {
		return i
	}
	return -1
}
