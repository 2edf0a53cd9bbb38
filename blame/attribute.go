package blame

import (
	"slices"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
)

// segment is a run of a candidate's lines found, in order, as lines of
// the file: file lines i0..i1 are lines j0.. of the candidate's run.
type segment struct {
	c        *cand
	run      int
	i0, i1   int
	j0       int
	anchored bool
	// fits is how many of the lines around the edit's run stand around
	// the segment here.
	fits int
	// counted says whether the segment holds a line that says
	// something, newest when the newest of those was committed.
	counted bool
	newest  time.Time
	// came caches, by commit, which of the segment's lines of that
	// commit the repository's history shows came from its (foreign)
	// file.
	came map[string]map[string]bool
}

// key is the line of its edit that a segment's line i stands for.
func (s *segment) key(i int) editLine { return editLine{s.c, s.run, s.j0 + i - s.i0} }

// editLine is one line an edit put in: it accounts for one line of
// the file at most.
type editLine struct {
	c      *cand
	run, j int
}

// attribute classifies the file's lines against the candidates. A line
// is an agent's when an edit of this file put it in (its run of lines
// found here, in time), or when it came from an edit of another file
// and the repository's history shows it did (h): resemblance alone is
// never enough, and lines that say too little to be told apart (blank,
// punctuation, short, common among the edits) are never taken from
// another file on their own. Each line an edit put in accounts for one
// line of the file at most. Mixed is a line in the place of an agent's
// line that is gone, like it: the agent's line a human changed.

// attribute classifies the file's lines against the candidates. A line
// is an agent's when an edit of this file put it in (its run of lines
// found here, in time), or when it came from an edit of another file
// and the repository's history shows it did (h): resemblance alone is
// never enough, and lines that say too little to be told apart (blank,
// punctuation, short, common among the edits) are never taken from
// another file on their own. Each line an edit put in accounts for one
// line of the file at most. Mixed is a line in the place of an agent's
// line that is gone, like it: the agent's line a human changed.
//
// It goes in three steps: the runs of the edits' lines found in the
// file (segments), each line given the best segment that may account
// for it (choose), and the lines none does looked at one by one
// (creditLeft).
func attribute(lines []blamed, cands []*cand, shallow bool, h *history) []Line {
	x := newLineIndex(lines, h)
	chosen, claimed := x.choose(x.segments(cands))
	out := make([]Line, len(lines))
	for i, l := range lines {
		out[i] = Line{N: i + 1, Kind: Human, Text: l.Text}
		if l.Commit != uncommitted {
			out[i].Commit = l.Commit
		}
		if chosen[i] != nil {
			setEdit(&out[i], Agent, chosen[i].c)
		}
	}
	x.creditLeft(out, cands, chosen, claimed, shallow)
	return out
}

// lineIndex is the file's lines as the matching reads them: each
// line's normal form, the lines each normal form stands at, and how
// much each line says. They are worked out once: every run of every
// edit found here asks them again.
type lineIndex struct {
	lines    []blamed
	norms    []string
	pos      map[string][]int
	weights  []int
	strongAt []bool
	h        *history
}

func newLineIndex(lines []blamed, h *history) *lineIndex {
	n := len(lines)
	x := &lineIndex{lines: lines, norms: make([]string, n), pos: map[string][]int{}, weights: make([]int, n), strongAt: make([]bool, n), h: h}
	for i, l := range lines {
		x.norms[i] = fileedit.Norm(l.Text)
		x.pos[x.norms[i]] = append(x.pos[x.norms[i]], i)
	}
	for i, s := range x.norms {
		x.weights[i] = weight(s)
		x.strongAt[i] = x.weights[i] >= 6 && len(x.pos[s]) <= 2
	}
	return x
}

// ident says whether a line can tell by itself which file it came
// from: it says something, stands at two places of the file at most,
// and is not common in the repository.
func (x *lineIndex) ident(s string) bool {
	return weight(s) >= 6 && len(x.pos[s]) <= 2 && !x.h.isCommon(s)
}

// strongIn says whether line s of run r of c says something here. A
// line of an edit of many places (every occurrence of a text) is at as
// many places of the file: it says something at twice those.
func (x *lineIndex) strongIn(c *cand, r int, s string) bool {
	return weight(s) >= 6 && len(x.pos[s]) <= 2*min(c.placesOf(r), len(x.lines))
}

// anchored says whether file lines i0..i1, found as lines of run r of
// c, can be its: one of them says something, or (for an edit of this
// file) three or more lines say enough together.
func (x *lineIndex) anchored(c *cand, r, i0, i1 int) bool {
	total, any := 0, false
	for i := i0; i <= i1; i++ {
		if c.foreign && x.strongAt[i] && !x.h.isCommon(x.norms[i]) || !c.foreign && x.strongIn(c, r, x.norms[i]) {
			any = true
		}
		total += x.weights[i]
	}
	return any || !c.foreign && i1-i0 >= 2 && total >= 12
}

// segments are the runs of the candidates' lines found in the file,
// by line of the file: at[i] are the segments that hold line i.
func (x *lineIndex) segments(cands []*cand) (at [][]*segment) {
	at = make([][]*segment, len(x.lines))
	for _, c := range cands {
		for r, run := range c.runs {
			if x.findAnchored(at, c, r, run) || c.foreign || len(run) > maxWeakRun {
				continue
			}
			x.findWeak(at, c, r, run)
		}
	}
	return at
}

// findAnchored finds the runs of the edit's lines in the file that
// hold a line that says something: each found from that line, as far
// as the edit's lines and the file's go on alike. The cost is the
// lines that can stand for themselves, whatever the number of blank
// lines and braces. It says whether run holds such a line.
func (x *lineIndex) findAnchored(at [][]*segment, c *cand, r int, run []string) bool {
	anchoredAny := false
	seen := map[[2]int]bool{}
	for j, l := range run {
		if !x.strongIn(c, r, l) {
			continue
		}
		anchoredAny = true
		for _, i := range x.pos[l] {
			i0, j0 := i, j
			for i0 > 0 && j0 > 0 && x.norms[i0-1] == run[j0-1] {
				i0, j0 = i0-1, j0-1
			}
			if seen[[2]int{i0, j0}] {
				continue
			}
			seen[[2]int{i0, j0}] = true
			x.add(at, c, r, i0, x.alikeTo(i, j, run), j0)
		}
	}
	return anchoredAny
}

// findWeak finds a short run of lines none of which says enough alone:
// it stands by its length (anchored), found line by line: each pair of
// equal lines that starts a diagonal (the lines before them differ) is
// followed as far as the two go on alike. No map a line: the blank
// lines and braces of a file are at hundreds of places, in the runs of
// hundreds of edits.
func (x *lineIndex) findWeak(at [][]*segment, c *cand, r int, run []string) {
	for j, l := range run {
		for _, i := range x.pos[l] {
			if i > 0 && j > 0 && x.norms[i-1] == run[j-1] {
				continue
			}
			x.add(at, c, r, i, x.alikeTo(i, j, run), j)
		}
	}
}

// alikeTo is the last line of the file that run goes on alike to, from
// file line i and run line j on.
func (x *lineIndex) alikeTo(i, j int, run []string) int {
	for i+1 < len(x.norms) && j+1 < len(run) && x.norms[i+1] == run[j+1] {
		i, j = i+1, j+1
	}
	return i
}

// add keeps file lines i0..i1, found as run r of c from its line j0, as
// a segment of each of those lines when they are anchored.
func (x *lineIndex) add(at [][]*segment, c *cand, r, i0, i1, j0 int) {
	if !x.anchored(c, r, i0, i1) {
		return
	}
	sg := &segment{c: c, run: r, i0: i0, i1: i1, j0: j0, anchored: true, fits: x.fits(c, r, i0, i1, j0)}
	for k := i0; k <= i1; k++ {
		if x.strongAt[k] {
			sg.counted = true
			if x.lines[k].Time.After(sg.newest) {
				sg.newest = x.lines[k].Time
			}
		}
	}
	for k := i0; k <= i1; k++ {
		at[k] = append(at[k], sg)
	}
}

// fits is how many of the lines the edit wrote around run r stand
// around file lines i0..i1, found as the run from its line j0: those
// above when the segment starts the run, those below when it ends it.
func (x *lineIndex) fits(c *cand, r, i0, i1, j0 int) int {
	if r >= len(c.ctx) {
		return 0
	}
	n := 0
	if j0 == 0 {
		for k, l := range c.ctx[r].above {
			if i0-1-k < 0 || x.norms[i0-1-k] != l {
				break
			}
			n++
		}
	}
	if j0+i1-i0 == len(c.runs[r])-1 {
		for k, l := range c.ctx[r].below {
			if i1+1+k >= len(x.norms) || x.norms[i1+1+k] != l {
				break
			}
			n++
		}
	}
	return n
}

// after says whether segment s's edit came after the commit that
// brought line i in.
func (x *lineIndex) after(s *segment, i int) bool {
	return s.c.e.At.After(x.lines[i].Time.Add(slack))
}

// inTime says whether segment s can account for line i by time: its
// edit came before the commit that brought the line in; a line too
// common to count on its own (a brace) that git matched to an older
// commit goes with the lines of its segment that count, but not one a
// later commit brought in than all of them (someone put it in after
// the edit).
func (x *lineIndex) inTime(s *segment, i int) bool {
	if x.strongAt[i] {
		return !x.after(s, i)
	}
	if s.counted && x.lines[i].Time.After(s.newest) {
		return false
	}
	return !x.after(s, i) || s.counted && !s.c.e.At.After(s.newest.Add(slack))
}

// cameFrom says whether a foreign segment's line i came from its file,
// as the history shows for the segment's lines of line i's commit.
func (x *lineIndex) cameFrom(s *segment, i int) bool {
	if s.c.dest {
		return true
	}
	commit := x.lines[i].Commit
	moved, seen := s.came[commit]
	if !seen {
		var group []string
		for k := s.i0; k <= s.i1; k++ {
			if x.lines[k].Commit == commit && x.ident(x.norms[k]) {
				group = append(group, x.norms[k])
			}
		}
		moved = x.h.came(commit, s.c.rel, group)
		if s.came == nil {
			s.came = map[string]map[string]bool{}
		}
		s.came[commit] = moved
	}
	return moved[x.norms[i]]
}

// eligible says whether segment s may account for line i.
func (x *lineIndex) eligible(s *segment, i int) bool {
	if !s.anchored || !x.inTime(s, i) || !x.h.canHold(s.c, x.lines[i], x.norms[i]) {
		return false
	}
	if !s.c.foreign {
		return true
	}
	if x.ident(x.norms[i]) {
		return x.cameFrom(s, i)
	}
	return x.betweenMoved(s, i)
}

// betweenMoved says whether line i, one that says too little, stands
// between two lines of foreign segment s that came from its file: only
// there does it go with the moved block.
func (x *lineIndex) betweenMoved(s *segment, i int) bool {
	above, below := false, false
	for k := s.i0; k <= s.i1; k++ {
		if k != i && x.ident(x.norms[k]) && x.inTime(s, k) && x.cameFrom(s, k) {
			if k < i {
				above = true
			} else {
				below = true
			}
		}
	}
	return above && below
}

// choose gives each line the segment that accounts for it best among
// those that may (at: a line's segments), the better segments first,
// each line of an edit accounting for as many lines of the file as it
// may (claimed).
func (x *lineIndex) choose(at [][]*segment) (chosen []*segment, claimed uses) {
	type claim struct {
		i int
		s *segment
	}
	var claims []claim
	for i := range x.lines {
		for _, s := range at[i] {
			if x.eligible(s, i) {
				claims = append(claims, claim{i, s})
			}
		}
	}
	slices.SortStableFunc(claims, func(a, b claim) int {
		switch {
		case better(a.s, b.s):
			return -1
		case better(b.s, a.s):
			return 1
		}
		return a.i - b.i
	})
	chosen = make([]*segment, len(x.lines))
	claimed = uses{}
	for _, c := range claims {
		k := c.s.key(c.i)
		if chosen[c.i] != nil || claimed.full(k) {
			continue
		}
		chosen[c.i] = c.s
		claimed.take(k)
	}
	return chosen, claimed
}

// creditLeft credits the lines no segment accounts for (out, the
// lines' answer so far): the agent's line that stood in its place
// (alignedAt), unknown in a shallow clone's boundary, or a command of
// an agent's that changed the file in the line's window.
func (x *lineIndex) creditLeft(out []Line, cands []*cand, chosen []*segment, claimed uses, shallow bool) {
	times := newCommitTimes(x.lines)
	commands := fileCommands(cands)
	for i, l := range x.lines {
		if chosen[i] != nil {
			continue
		}
		s, same, ok := x.alignedAt(i, chosen, claimed)
		ok = ok && !s.c.e.At.After(l.Time.Add(slack))
		if ok && same {
			setEdit(&out[i], Agent, s.c)
			continue
		}
		if l.Boundary && shallow {
			out[i].Kind = Unknown
			continue
		}
		sub, program, shell := x.commandsAt(i, times.before(l.Time), commands, cands)
		switch {
		case sub != nil:
			setEdit(&out[i], Agent, sub)
			out[i].Evidence = EvidenceShell
		case program != nil && !shell:
			setEdit(&out[i], Agent, program)
			out[i].Evidence = EvidenceProgram
		case shell || program != nil:
			out[i].Kind = Unknown
		case ok:
			setEdit(&out[i], Mixed, s.c)
		}
	}
}

// fileCommands are the commands of agents that changed the file itself
// (a sed -i, a program): the only candidates a line no edit's text
// accounts for is looked up among, one by one.
func fileCommands(cands []*cand) []*cand {
	var commands []*cand
	for _, c := range cands {
		// A copy (cp) put in what the file copied held: its edits tell.
		if !c.foreign && (c.c.Op == loom.EditShell && c.e.From == "" || c.c.Op == loom.EditProgram) {
			commands = append(commands, c)
		}
	}
	return commands
}

// commandsAt are the commands of the agents that changed the file in
// line i's window (after low, when the commit before its own was
// made): a substitution whose result the line is (sub), a program that
// named the file (program); shell says a command ran there whose
// substitution cannot be read.
func (x *lineIndex) commandsAt(i int, low time.Time, commands, cands []*cand) (sub, program *cand, shell bool) {
	l := x.lines[i]
	for _, c := range commands {
		if !c.e.At.After(low) || c.e.At.After(l.Time.Add(slack)) || !x.h.canHold(c, l, x.norms[i]) {
			continue
		}
		switch c.c.Op {
		case loom.EditShell:
			// A substitution that can be read changed only the lines
			// it gives: another line is not its.
			readable, gave := x.h.substituted(c.c.Command, c.rel, c.e.At, l, x.norms[i], ownLines(cands, c.e.At))
			if !readable {
				shell = true
			} else if gave && sub == nil {
				sub = c
			}
		case loom.EditProgram:
			program = c
		}
	}
	return sub, program, shell
}

// uses count the lines of the file each line an edit put in accounts
// for: one at most, but for an edit of many places.
type uses map[editLine]int

func (u uses) full(k editLine) bool { return u[k] >= k.c.placesOf(k.run) }
func (u uses) take(k editLine)      { u[k]++ }

// maxWeakRun is the longest run of an edit's lines, none of which says
// enough alone, that is looked for in the file line by line.
const maxWeakRun = 50

// better says whether segment a is a better account of a line than b:
// the longer run, then the one the lines the edit wrote around it
// stand around (of lines alike at several places, those the edit put
// where they are), then the later edit (the last to put the line in).
func better(a, b *segment) bool {
	la, lb := a.i1-a.i0, b.i1-b.i0
	if la != lb {
		return la > lb
	}
	if a.fits != b.fits {
		return a.fits > b.fits
	}
	return a.c.e.At.After(b.c.e.At)
}

func setEdit(l *Line, kind string, c *cand) {
	e := c.e
	at := e.At
	l.Kind, l.SessionID, l.MessageID, l.PartID, l.Seq, l.Turn = kind, e.SessionID, e.MessageID, e.PartID, e.Seq, e.Turn
	l.Agent, l.Model, l.Provider, l.Tool, l.At, l.Member = e.Agent, e.Model, e.Provider, e.Tool, &at, e.Member
	if c.rel != "" {
		l.From = c.rel
	}
}

// alignedAt finds the agent's line that stood where line i does: an
// agent's segment ends just above it (or starts just below it), and
// its run's line at the same distance is line i (same: a line too
// common to count on its own, such as a brace, that the agent wrote
// there and no other line of the file stands for), or is like it and
// is gone from the file (a human changed it; a line beside the agent's
// that only resembles one of them is the human's own). The segment is
// of an edit of this file, or of another file whose lines the
// repository's history shows moved here by the commit that brought
// line i in too: a block moved and changed in one commit keeps its
// braces, and its changed lines are mixed.
func (x *lineIndex) alignedAt(i int, chosen []*segment, claimed uses) (s *segment, same, ok bool) {
	norms, pos := x.norms, x.pos
	for d := 1; d <= 3; d++ {
		for _, k := range []int{i - d, i + d} {
			if k < 0 || k >= len(chosen) || chosen[k] == nil {
				continue
			}
			s := chosen[k]
			if s.c.foreign && (x.lines[k].Commit != x.lines[i].Commit || x.lines[i].Commit == uncommitted) {
				continue
			}
			j := s.j0 + (k - s.i0) + (i - k)
			run := s.c.runs[s.run]
			if j < 0 || j >= len(run) {
				continue
			}
			key := editLine{s.c, s.run, j}
			if norms[i] == run[j] && !claimed.full(key) {
				claimed.take(key)
				return s, true, true
			}
			if !claimed.full(key) && len(pos[run[j]]) == 0 && similar(norms[i], run[j]) >= 0.5 {
				claimed.take(key)
				return s, false, true
			}
		}
	}
	return nil, false, false
}
