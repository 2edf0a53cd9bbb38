package blame

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// madeCommit is a commit made in a work tree (not a merge): one its
// HEAD's reflog records as made there.
type madeCommit struct {
	sha string
	at  time.Time
}

// worktrees are the other work trees of the blamed repository on this
// machine (git worktree add) and the commits made in each, read once
// per blame.
type worktrees struct {
	listed bool
	others map[string]bool
	made   map[string][]madeCommit
	// asked are the roots an edit was made at that the answer rested
	// on, each with whether it had a .git then (rootsHold looks again).
	asked map[string]bool
}

// canHold says whether the line l (norm its Norm) can hold what edit c
// wrote: an edit made in another work tree of the repository reached
// this file's history only through a commit made in that work tree
// after the edit that brought the line into the file (merged, or its
// change squashed or picked into the commit that brought the line here,
// which is not older than it). An edit of this work tree, or of a root
// that is no work tree of this machine (another machine, a worktree
// since removed), cannot be told and stands as before.
func (h *history) canHold(c *cand, l blamed, norm string) bool {
	if h == nil || c.root == "" || c.root == h.g.Dir {
		return true
	}
	h.ask(c.root)
	if !h.otherWorktree(c.root) {
		return true
	}
	if l.Commit == uncommitted {
		// The line is in this work tree's files alone.
		return false
	}
	for _, x := range h.madeIn(c.root) {
		if x.at.Add(slack).Before(c.e.At) || l.Time.Add(slack).Before(x.at) {
			continue
		}
		if h.count(x.sha, c.rel, false)[norm] > h.count(x.sha, c.rel, true)[norm] {
			return true
		}
	}
	return false
}

// ask notes that the answer rests on what root is: a work tree of this
// machine (its .git there) or not.
func (h *history) ask(root string) {
	if _, ok := h.trees.asked[root]; ok {
		return
	}
	if h.trees.asked == nil {
		h.trees.asked = map[string]bool{}
	}
	h.trees.asked[root] = hasGit(root)
}

// hasGit says whether dir is a work tree's top (its .git there).
func hasGit(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil
}

// otherWorktree says whether root is another work tree of the blamed
// repository on this machine.
func (h *history) otherWorktree(root string) bool {
	w := &h.trees
	if !w.listed {
		w.listed = true
		if h.g.shared != nil {
			w.others = h.g.shared.worktrees(h.listWorktrees)
		} else {
			w.others = h.listWorktrees()
		}
	}
	return w.others[root]
}

// listWorktrees are the other work trees git lists of the repository.
func (h *history) listWorktrees() map[string]bool {
	others := map[string]bool{}
	out, err := h.g.run(h.ctx, "worktree", "list", "--porcelain")
	if err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if dir, ok := strings.CutPrefix(line, "worktree "); ok {
				if real, err := filepath.EvalSymlinks(dir); err == nil {
					dir = real
				}
				if dir != h.g.Dir {
					others[dir] = true
				}
			}
		}
	}
	return others
}

// madeIn are the commits made in work tree root that are no merge, as
// its HEAD's reflog records them (a commit, an amend, a rebase's or a
// cherry-pick's): not those it only moved to (a checkout, a reset, a
// fast-forward).
func (h *history) madeIn(root string) []madeCommit {
	w := &h.trees
	if cs, ok := w.made[root]; ok {
		return cs
	}
	if w.made == nil {
		w.made = map[string][]madeCommit{}
	}
	var cs []madeCommit
	out, err := Git{Bin: h.g.Bin, Dir: root}.run(h.ctx, "log", "-g", "-n", "5000", "--format=%H %P%x00%ct%x00%gs", "HEAD")
	if err == nil {
		seen := map[string]bool{}
		for _, rec := range strings.Split(string(out), "\n") {
			f := strings.Split(rec, "\x00")
			if len(f) != 3 {
				continue
			}
			ids := strings.Fields(f[0])
			if len(ids) == 0 || len(ids) > 2 || seen[ids[0]] || !madeBy(f[2]) {
				continue
			}
			seen[ids[0]] = true
			sec, _ := strconv.ParseInt(f[1], 10, 64)
			cs = append(cs, madeCommit{sha: ids[0], at: time.Unix(sec, 0).UTC()})
		}
	}
	w.made[root] = cs
	return cs
}

// madeBy says whether a reflog entry's subject records a commit made
// in its work tree.
func madeBy(subject string) bool {
	for _, p := range []string{"commit", "rebase", "cherry-pick", "revert", "am:"} {
		if strings.HasPrefix(subject, p) {
			return true
		}
	}
	return false
}
