package blame

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom/fileedit"
)

// history answers, from the repository, whether lines of this file came
// from another one: git's own rule for a copy or a move (git blame -C),
// that the commit which brought them in also changed the other file,
// which held them before it. Answers are kept: a file's lines come from
// few commits.
type history struct {
	ctx context.Context
	g   Git
	// rel is the file blamed, rev the commit blamed ("" for the work
	// tree).
	rel, rev string
	// common are the lines the edits of many files put in.
	common map[string]bool

	changed map[string]map[string]bool // commit → files it changed
	lines   map[string][]string        // commit + "\x00" + file → the file's lines before it
	revs    map[string]string          // "@" + a time → the last commit before it
	counts  map[string]map[string]int  // commit, file, before → how many times it held each line
	trees   worktrees
}

// changedIn are the files commit changed (the work tree's changes since
// HEAD for the lines not committed).
func (h *history) changedIn(commit string) map[string]bool {
	if fs, ok := h.changed[commit]; ok {
		return fs
	}
	if h.changed == nil {
		h.changed = map[string]map[string]bool{}
	}
	var out []byte
	var err error
	if commit == uncommitted {
		out, err = h.g.run(h.ctx, "diff", "--name-only", "--no-renames", "HEAD", "--")
	} else if h.g.shared != nil {
		out, err = h.g.shared.changedIn(h.ctx, h.g, commit)
	} else {
		out, err = h.g.run(h.ctx, slices.Concat([]string{"diff-tree"}, changedArgs, []string{commit})...)
	}
	fs := map[string]bool{}
	if err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				fs[l] = true
			}
		}
	}
	h.changed[commit] = fs
	return fs
}

// came is which of lines (Norm), which commit brought into this file,
// moved there from file, as git's own rule for a move tells: the commit
// changed file too, which held the line before it and holds it fewer
// times after it; none unless those that moved are a block (two lines
// or more) that says enough to be told apart (git's threshold for a
// moved block: twenty letters or digits). A copy, the lines left where
// they were, is no evidence: lines alike in two files are as likely
// written twice, and a session that copied a file (cp) is the
// destination's own edit.
func (h *history) came(commit, file string, lines []string) map[string]bool {
	if h == nil || file == h.rel || len(lines) < 2 || !h.changedIn(commit)[file] {
		return nil
	}
	before, after := h.count(commit, file, true), h.count(commit, file, false)
	moved := map[string]bool{}
	total := 0
	for _, l := range lines {
		if before[l] > 0 && after[l] < before[l] && !moved[l] {
			moved[l] = true
			total += weight(l)
		}
	}
	if len(moved) < 2 || total < 20 {
		return nil
	}
	return moved
}

// count is how many times file held each line (Norm) just before commit
// (before) or at it (the work tree's file for the lines not committed).
func (h *history) count(commit, file string, before bool) map[string]int {
	key := commit + "\x00" + file + "\x00" + strconv.FormatBool(before)
	if c, ok := h.counts[key]; ok {
		return c
	}
	if h.counts == nil {
		h.counts = map[string]map[string]int{}
	}
	var b []byte
	var err error
	switch {
	case before && commit == uncommitted:
		b, err = h.g.Show(h.ctx, "HEAD", file)
	case before:
		b, err = h.g.Show(h.ctx, commit+"^", file)
	case commit == uncommitted:
		b, err = os.ReadFile(filepath.Join(h.g.Dir, filepath.FromSlash(file)))
	default:
		b, err = h.g.Show(h.ctx, commit, file)
	}
	c := map[string]int{}
	if err == nil && !binary(b) {
		for _, l := range fileedit.Lines(string(b)) {
			c[fileedit.Norm(l)]++
		}
	}
	h.counts[key] = c
	return c
}

// isCommon says whether a line is too common among the repository's
// edits to tell where it came from.
func (h *history) isCommon(norm string) bool {
	return h != nil && h.common[norm]
}

// linesBefore are the lines of file just before commit (at its first
// parent, or at HEAD for the lines not committed).
func (h *history) linesBefore(commit, file string) []string {
	key := commit + "\x00" + file
	if ls, ok := h.lines[key]; ok {
		return ls
	}
	if h.lines == nil {
		h.lines = map[string][]string{}
	}
	rev := commit + "^"
	if commit == uncommitted {
		rev = "HEAD"
	}
	var ls []string
	if b, err := h.g.Show(h.ctx, rev, file); err == nil && !binary(b) {
		ls = fileedit.Lines(string(b))
	}
	h.lines[key] = ls
	return ls
}

// linesAtTime are file's lines in the last commit of HEAD's history
// made before t; none if there is none.
func (h *history) linesAtTime(t time.Time, file string) []string {
	key := "@" + strconv.FormatInt(t.Unix(), 10)
	rev, ok := h.revs[key]
	if !ok {
		out, err := h.g.run(h.ctx, "rev-list", "-1", "--before="+strconv.FormatInt(t.Unix(), 10), "HEAD")
		if err == nil {
			rev = strings.TrimSpace(string(out))
		}
		if h.revs == nil {
			h.revs = map[string]string{}
		}
		h.revs[key] = rev
	}
	if rev == "" {
		return nil
	}
	lk := key + "\x00" + file
	if ls, ok := h.lines[lk]; ok {
		return ls
	}
	var ls []string
	if b, err := h.g.Show(h.ctx, rev, file); err == nil && !binary(b) {
		ls = fileedit.Lines(string(b))
	}
	if h.lines == nil {
		h.lines = map[string][]string{}
	}
	h.lines[lk] = ls
	return ls
}

// substituted says whether cmd is a sed -i or perl -pi command whose
// s/// can be read (readable), and whether line l (norm its Norm) is
// what it made of a line of the file (or of cmdFile, the file the
// command ran on) before l's commit, or of a line
// the agents' edits of the file put in before the command (own: a
// file written and rewritten before any commit) (gave).
func (h *history) substituted(cmd, cmdFile string, at time.Time, l blamed, norm string, own [][]string) (readable, gave bool) {
	f, ok := substitution(cmd)
	if !ok {
		return false, false
	}
	if h == nil {
		return true, false
	}
	file := l.Path
	if l.Commit == uncommitted {
		file = h.rel
	}
	gives := func(p string) bool {
		q := f(p)
		return q != p && fileedit.Norm(q) == norm
	}
	if slices.ContainsFunc(h.linesBefore(l.Commit, file), gives) {
		return true, true
	}
	// The command's own file, when it is another name of this one's
	// lineage (a file the agent copied here after its sed).
	if cmdFile != "" && cmdFile != file && slices.ContainsFunc(h.linesBefore(l.Commit, cmdFile), gives) {
		return true, true
	}
	// The command's file as the last commit before the command held it:
	// a file copied here commits after the sed that changed its source
	// was committed, when the source already held what the sed made.
	if cmdFile != "" && !at.IsZero() && slices.ContainsFunc(h.linesAtTime(at, cmdFile), gives) {
		return true, true
	}
	for _, run := range own {
		if slices.ContainsFunc(run, gives) {
			return true, true
		}
	}
	return true, false
}

// ownLines are the lines the edits of the file itself among cands put
// in before t.
func ownLines(cands []*cand, t time.Time) [][]string {
	var out [][]string
	for _, c := range cands {
		if !c.foreign && c.e.At.Before(t) {
			out = append(out, c.raw...)
		}
	}
	return out
}
