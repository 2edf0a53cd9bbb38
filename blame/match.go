package blame

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
)

// slack is how much later than a commit's time an edit may be and still
// be in it: git keeps whole seconds.
const slack = time.Second

// refine gives each candidate the runs of lines it put in. An edit's
// are its replacements' own lines; a write's are the lines the file did
// not hold before it, as far as that is known: the file the agents'
// edits before it left, or the file as the last commit before it had
// it when that is newer. Candidates are in time order; each file's are
// followed on their own.
func refine(ctx context.Context, g Git, cands []*cand) error {
	var commits []fileCommit
	loaded := false
	all := cands
	if g.shared != nil {
		// The runs of a file's edits found for another file's blame,
		// from the same commits, are these.
		var done func()
		if cands, done = g.shared.refinedBefore(cands); done != nil {
			defer done()
		}
	}
	type file struct {
		state []string
		known bool
		last  time.Time
	}
	files := map[string]*file{}
	for _, c := range cands {
		f := files[c.rel]
		if f == nil {
			f = &file{}
			files[c.rel] = f
		}
		// The file as the last commit before the edit had it, when
		// that is newer than what the edits before it tell.
		committed := func() {
			if !loaded {
				commits, loaded = fileCommits(ctx, g, all), true
			}
			if fc, ok := commitBefore(commits, c.rel, c.e.At); ok && (!f.known || fc.at.After(f.last)) {
				if b, err := g.Show(ctx, fc.sha, fc.path); err == nil {
					f.state, f.known = fileedit.Lines(string(b)), true
				}
			}
		}
		switch c.c.Op {
		case loom.EditWrite:
			content := fileedit.Lines(c.c.Content)
			committed()
			if f.known {
				c.raw = fileedit.Inserted(f.state, content)
			} else {
				c.raw = c.c.Added()
			}
			f.state, f.known = content, true
		case loom.EditChange:
			if !f.known && slices.ContainsFunc(c.c.Replace, func(r fileedit.Replacement) bool { return r.All }) {
				committed()
			}
			c.raw, c.places = changeRuns(c.c.Replace, f.state, f.known)
			if f.known {
				f.state = replaced(f.state, c.c.Replace)
			}
		default:
			f.known = false
		}
		f.last = c.e.At
		for _, r := range c.raw {
			n := make([]string, len(r))
			for i, l := range r {
				n[i] = fileedit.Norm(l)
			}
			c.runs = append(c.runs, n)
		}
	}
	return nil
}

// changeRuns are the runs of lines an edit's replacements put in, and
// at how many places of the file each run went: one, but for a
// replacement of every occurrence of its old text, as many as the file
// before it held (state, when known), else as many as the call said,
// else any number.
func changeRuns(rs []fileedit.Replacement, state []string, known bool) (runs [][]string, places []int) {
	text := strings.Join(state, "\n")
	for _, r := range rs {
		n := 1
		if r.All {
			n = 0
			if known && r.Old != "" {
				n = strings.Count(text, r.Old)
			}
			switch {
			case n == 0 && r.Count > 0:
				n = r.Count
			case n == 0:
				n = anyPlaces
			}
		}
		for _, run := range fileedit.Inserted(fileedit.Lines(r.Old), fileedit.Lines(r.New)) {
			runs, places = append(runs, run), append(places, n)
		}
		text = replace(text, r)
	}
	return runs, places
}

// anyPlaces is the places of a run whose edit replaced every
// occurrence of a text of a file whose content is not known.
const anyPlaces = 1 << 20

// replaced is the file state after an edit's replacements.
func replaced(state []string, rs []fileedit.Replacement) []string {
	text := strings.Join(state, "\n")
	for _, r := range rs {
		text = replace(text, r)
	}
	return strings.Split(text, "\n")
}

// replace makes replacement r in text, as the edit's tool did.
func replace(text string, r fileedit.Replacement) string {
	if r.Old == "" || !strings.Contains(text, r.Old) {
		return text
	}
	n := 1
	if r.All {
		n = -1
	}
	return strings.Replace(text, r.Old, r.New, n)
}

// fileCommit is a commit that changed a file of the lineage.
type fileCommit struct {
	sha, path string
	at        time.Time
}

// fileCommits are the commits that changed the candidates' files, from
// a day before the first write on, oldest first.
func fileCommits(ctx context.Context, g Git, cands []*cand) []fileCommit {
	var since time.Time
	files := map[string]bool{}
	for _, c := range cands {
		files[c.rel] = true
		if c.c.Op == loom.EditWrite && since.IsZero() {
			since = c.e.At.Add(-24 * time.Hour)
		}
	}
	args := []string{"log", "--format=%x00%H %ct", "--name-only", "--no-renames", "--since=" + strconv.FormatInt(since.Unix(), 10), "--"}
	// In order: the arguments are also the key under which a
	// directory's blames share git's answer.
	args = append(args, slices.Sorted(maps.Keys(files))...)
	var out []byte
	var err error
	if g.shared != nil {
		out, err = g.shared.log(ctx, g, args)
	} else {
		out, err = g.run(ctx, args...)
	}
	if err != nil {
		return nil
	}
	var cs []fileCommit
	for _, rec := range strings.Split(string(out), "\x00") {
		ls := strings.Split(strings.TrimSpace(rec), "\n")
		if len(ls) < 2 {
			continue
		}
		head := strings.Fields(ls[0])
		if len(head) != 2 {
			continue
		}
		sec, _ := strconv.ParseInt(head[1], 10, 64)
		for _, p := range ls[1:] {
			if files[strings.TrimSpace(p)] {
				cs = append(cs, fileCommit{sha: head[0], path: strings.TrimSpace(p), at: time.Unix(sec, 0).UTC()})
			}
		}
	}
	slices.Reverse(cs)
	return cs
}

// commitBefore is the last commit of file rel at or before t.
func commitBefore(cs []fileCommit, rel string, t time.Time) (fileCommit, bool) {
	var found fileCommit
	ok := false
	for _, c := range cs {
		// Commits keep whole seconds: one in the same second as the
		// edit may be after it.
		if c.at.Add(slack).After(t) {
			break
		}
		if c.path == rel {
			found, ok = c, true
		}
	}
	return found, ok
}

// segment is a run of a candidate's lines found, in order, as lines of
// the file: file lines i0..i1 are lines j0.. of the candidate's run.
type segment struct {
	c        *cand
	run      int
	i0, i1   int
	j0       int
	anchored bool
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
func attribute(lines []blamed, cands []*cand, shallow bool, h *history) []Line {
	n := len(lines)
	norms := make([]string, n)
	pos := map[string][]int{}
	for i, l := range lines {
		norms[i] = fileedit.Norm(l.Text)
		pos[norms[i]] = append(pos[norms[i]], i)
	}
	strong := func(s string) bool { return weight(s) >= 6 && len(pos[s]) <= 2 }
	// ident is a line that can tell by itself which file it came from.
	ident := func(s string) bool { return strong(s) && !h.isCommon(s) }
	// The same of each line of the file, once: every run of every edit
	// found here asks them again.
	weights := make([]int, n)
	strongAt := make([]bool, n)
	for i, s := range norms {
		weights[i] = weight(s)
		strongAt[i] = weights[i] >= 6 && len(pos[s]) <= 2
	}
	// A line of an edit of many places (every occurrence of a text) is
	// at as many places of the file: it says something at twice those.
	strongIn := func(c *cand, r int, s string) bool {
		return weight(s) >= 6 && len(pos[s]) <= 2*min(c.placesOf(r), n)
	}
	anchored := func(c *cand, r, i0, i1 int) bool {
		total, any := 0, false
		for i := i0; i <= i1; i++ {
			if c.foreign && strongAt[i] && !h.isCommon(norms[i]) || !c.foreign && strongIn(c, r, norms[i]) {
				any = true
			}
			total += weights[i]
		}
		return any || !c.foreign && i1-i0 >= 2 && total >= 12
	}
	at := make([][]*segment, n)
	emit := func(c *cand, r, i0, i1, j0 int) {
		if !anchored(c, r, i0, i1) {
			return
		}
		sg := &segment{c: c, run: r, i0: i0, i1: i1, j0: j0, anchored: true}
		for k := i0; k <= i1; k++ {
			if strongAt[k] {
				sg.counted = true
				if lines[k].Time.After(sg.newest) {
					sg.newest = lines[k].Time
				}
			}
		}
		for k := i0; k <= i1; k++ {
			at[k] = append(at[k], sg)
		}
	}
	for _, c := range cands {
		for r, run := range c.runs {
			// The runs of the edit's lines found in the file that hold a
			// line that says something: each found from that line, as far
			// as the edit's lines and the file's go on alike. The cost is
			// the lines that can stand for themselves, whatever the
			// number of blank lines and braces.
			anchoredAny := false
			seen := map[[2]int]bool{}
			for j, l := range run {
				if !strongIn(c, r, l) {
					continue
				}
				anchoredAny = true
				for _, i := range pos[l] {
					i0, j0 := i, j
					for i0 > 0 && j0 > 0 && norms[i0-1] == run[j0-1] {
						i0, j0 = i0-1, j0-1
					}
					if seen[[2]int{i0, j0}] {
						continue
					}
					seen[[2]int{i0, j0}] = true
					i1, j1 := i, j
					for i1+1 < n && j1+1 < len(run) && norms[i1+1] == run[j1+1] {
						i1, j1 = i1+1, j1+1
					}
					emit(c, r, i0, i1, j0)
				}
			}
			if anchoredAny || c.foreign || len(run) > maxWeakRun {
				continue
			}
			// A short run of lines none of which says enough alone: it
			// stands by its length (anchored), found line by line: each
			// pair of equal lines that starts a diagonal (the lines before
			// them differ) is followed as far as the two go on alike. No
			// map a line: the blank lines and braces of a file are at
			// hundreds of places, in the runs of hundreds of edits.
			for j, l := range run {
				for _, i := range pos[l] {
					if i > 0 && j > 0 && norms[i-1] == run[j-1] {
						continue
					}
					i1, j1 := i, j
					for i1+1 < n && j1+1 < len(run) && norms[i1+1] == run[j1+1] {
						i1, j1 = i1+1, j1+1
					}
					emit(c, r, i, i1, j)
				}
			}
		}
	}
	// The times of the commits the lines come from: the one before a
	// line's own is when a change of the file before it was committed.
	var times []time.Time
	for _, l := range lines {
		if l.Commit != uncommitted {
			times = append(times, l.Time)
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	before := func(t time.Time) time.Time {
		i, _ := slices.BinarySearchFunc(times, t, time.Time.Compare)
		if i == 0 {
			return time.Time{}
		}
		return times[i-1]
	}
	// A segment accounts for line i when its edit came before the
	// commit that brought the line in; a line too common to count on its
	// own (a brace) that git matched to an older commit goes with the
	// lines of its segment that count, but not one a later commit
	// brought in than all of them (someone put it in after the edit).
	after := func(s *segment, i int) bool { return s.c.e.At.After(lines[i].Time.Add(slack)) }
	inTime := func(s *segment, i int) bool {
		if strongAt[i] {
			return !after(s, i)
		}
		if s.counted && lines[i].Time.After(s.newest) {
			return false
		}
		return !after(s, i) || s.counted && !s.c.e.At.After(s.newest.Add(slack))
	}
	// cameFrom: a foreign segment's line i came from its file, as the
	// history shows for the segment's lines of line i's commit.
	cameFrom := func(s *segment, i int) bool {
		if s.c.dest {
			return true
		}
		commit := lines[i].Commit
		moved, seen := s.came[commit]
		if !seen {
			var group []string
			for k := s.i0; k <= s.i1; k++ {
				if lines[k].Commit == commit && ident(norms[k]) {
					group = append(group, norms[k])
				}
			}
			moved = h.came(commit, s.c.rel, group)
			if s.came == nil {
				s.came = map[string]map[string]bool{}
			}
			s.came[commit] = moved
		}
		return moved[norms[i]]
	}
	eligible := func(s *segment, i int) bool {
		if !s.anchored || !inTime(s, i) || !h.canHold(s.c, lines[i], norms[i]) {
			return false
		}
		if !s.c.foreign {
			return true
		}
		if ident(norms[i]) {
			return cameFrom(s, i)
		}
		// A line that says too little goes with a moved block only
		// between two of its lines that came.
		above, below := false, false
		for k := s.i0; k <= s.i1; k++ {
			if k != i && ident(norms[k]) && inTime(s, k) && cameFrom(s, k) {
				if k < i {
					above = true
				} else {
					below = true
				}
			}
		}
		return above && below
	}
	type claim struct {
		i int
		s *segment
	}
	var claims []claim
	for i := range lines {
		for _, s := range at[i] {
			if eligible(s, i) {
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
	chosen := make([]*segment, n)
	claimed := uses{}
	for _, c := range claims {
		k := c.s.key(c.i)
		if chosen[c.i] != nil || claimed.full(k) {
			continue
		}
		chosen[c.i] = c.s
		claimed.take(k)
	}
	// The commands of agents that changed the file itself (a sed -i, a
	// program): the only candidates a line no edit's text accounts for
	// is looked up among, one by one.
	var commands []*cand
	for _, c := range cands {
		// A copy (cp) put in what the file copied held: its edits tell.
		if !c.foreign && (c.c.Op == loom.EditShell && c.e.From == "" || c.c.Op == loom.EditProgram) {
			commands = append(commands, c)
		}
	}
	out := make([]Line, n)
	for i, l := range lines {
		out[i] = Line{N: i + 1, Kind: Human, Text: l.Text}
		if l.Commit != uncommitted {
			out[i].Commit = l.Commit
		}
		if chosen[i] != nil {
			setEdit(&out[i], Agent, chosen[i].c)
		}
	}
	for i, l := range lines {
		if chosen[i] != nil {
			continue
		}
		s, same, ok := alignedAt(i, norms, pos, chosen, claimed)
		ok = ok && !s.c.e.At.After(l.Time.Add(slack))
		if ok && same {
			setEdit(&out[i], Agent, s.c)
			continue
		}
		if l.Boundary && shallow {
			out[i].Kind = Unknown
			continue
		}
		// Commands of the agents that changed the file in the line's
		// window (after the commit before its own): a substitution
		// whose result the line is, a program that named the file.
		low := before(l.Time)
		var sub, program *cand
		shell := false
		for _, c := range commands {
			if !c.e.At.After(low) || c.e.At.After(l.Time.Add(slack)) || !h.canHold(c, l, norms[i]) {
				continue
			}
			switch c.c.Op {
			case loom.EditShell:
				// A substitution that can be read changed only the lines
				// it gives: another line is not its.
				readable, gave := h.substituted(c.c.Command, l, norms[i], ownLines(cands, c.e.At))
				if !readable {
					shell = true
				} else if gave && sub == nil {
					sub = c
				}
			case loom.EditProgram:
				program = c
			}
		}
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
	return out
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
// the longer run, then the later edit (the last to put the line in).
func better(a, b *segment) bool {
	la, lb := a.i1-a.i0, b.i1-b.i0
	if la != lb {
		return la > lb
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
// agent's segment (of an edit of this file) ends just above it (or
// starts just below it), and its run's line at the same distance is
// line i (same: a line too common to count on its own, such as a
// brace, that the agent wrote there and no other line of the file
// stands for), or is like it and is gone from the file (a human changed
// it; a line beside the agent's that only resembles one of them is the
// human's own).
func alignedAt(i int, norms []string, pos map[string][]int, chosen []*segment, claimed uses) (s *segment, same, ok bool) {
	for d := 1; d <= 3; d++ {
		for _, k := range []int{i - d, i + d} {
			if k < 0 || k >= len(chosen) || chosen[k] == nil || chosen[k].c.foreign {
				continue
			}
			s := chosen[k]
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

// weight is how much a line says: its letters and digits.
func weight(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return n
}

// similar is the Dice coefficient of two lines' pairs of characters.
func similar(a, b string) float64 {
	if a == b {
		return 1
	}
	if len(a) < 2 || len(b) < 2 {
		return 0
	}
	pairs := map[string]int{}
	for i := 0; i+1 < len(a); i++ {
		pairs[a[i:i+2]]++
	}
	common := 0
	for i := 0; i+1 < len(b); i++ {
		if pairs[b[i:i+2]] > 0 {
			pairs[b[i:i+2]]--
			common++
		}
	}
	return 2 * float64(common) / float64(len(a)-1+len(b)-1)
}
