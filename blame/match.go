package blame

import (
	"context"
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
		switch c.c.Op {
		case loom.EditWrite:
			content := fileedit.Lines(c.c.Content)
			if !loaded {
				commits, loaded = fileCommits(ctx, g, cands), true
			}
			if fc, ok := commitBefore(commits, c.rel, c.e.At); ok && (!f.known || fc.at.After(f.last)) {
				if b, err := g.Show(ctx, fc.sha, fc.path); err == nil {
					f.state, f.known = fileedit.Lines(string(b)), true
				}
			}
			if f.known {
				c.raw = fileedit.Inserted(f.state, content)
			} else {
				c.raw = c.c.Added()
			}
			f.state, f.known = content, true
		case loom.EditChange:
			c.raw = c.c.Added()
			if f.known {
				text := strings.Join(f.state, "\n")
				for _, r := range c.c.Replace {
					if r.Old != "" && strings.Contains(text, r.Old) {
						n := 1
						if r.All {
							n = -1
						}
						text = strings.Replace(text, r.Old, r.New, n)
					}
				}
				f.state = strings.Split(text, "\n")
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
	for f := range files {
		args = append(args, f)
	}
	out, err := g.run(ctx, args...)
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
}

// attribute classifies the file's lines against the candidates.
func attribute(lines []blamed, cands []*cand, shallow bool) []Line {
	n := len(lines)
	norms := make([]string, n)
	pos := map[string][]int{}
	for i, l := range lines {
		norms[i] = fileedit.Norm(l.Text)
		pos[norms[i]] = append(pos[norms[i]], i)
	}
	strong := func(s string) bool { return weight(s) >= 6 && len(pos[s]) <= 2 }
	anchored := func(i0, i1 int) bool {
		total := 0
		for i := i0; i <= i1; i++ {
			if strong(norms[i]) {
				return true
			}
			total += weight(norms[i])
		}
		return i1-i0 >= 2 && total >= 12
	}
	at := make([][]*segment, n)
	for _, c := range cands {
		for r, run := range c.runs {
			prev := map[int]int{}
			emit := func(end, length, jEnd int) {
				s := &segment{c: c, run: r, i0: end - length + 1, i1: end, j0: jEnd - length + 1}
				s.anchored = anchored(s.i0, s.i1)
				for i := s.i0; i <= s.i1; i++ {
					at[i] = append(at[i], s)
				}
			}
			for j, l := range run {
				cur := make(map[int]int, len(pos[l]))
				for _, i := range pos[l] {
					cur[i] = prev[i-1] + 1
				}
				for i, length := range prev {
					if _, ok := cur[i+1]; !ok {
						emit(i, length, j-1)
					}
				}
				prev = cur
			}
			for i, length := range prev {
				emit(i, length, len(run)-1)
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
	// lines of its segment that count.
	after := func(s *segment, i int) bool { return s.c.e.At.After(lines[i].Time.Add(slack)) }
	inTime := func(s *segment, i int) bool {
		if !after(s, i) {
			return true
		}
		if strong(norms[i]) {
			return false
		}
		for k := s.i0; k <= s.i1; k++ {
			if strong(norms[k]) && !after(s, k) {
				return true
			}
		}
		return false
	}
	out := make([]Line, n)
	chosen := make([]*segment, n)
	for i, l := range lines {
		out[i] = Line{N: i + 1, Kind: Human, Text: l.Text}
		if l.Commit != uncommitted {
			out[i].Commit = l.Commit
		}
		var best *segment
		for _, s := range at[i] {
			if !s.anchored || !inTime(s, i) {
				continue
			}
			if best == nil || better(s, best) {
				best = s
			}
		}
		if best != nil {
			chosen[i] = best
			setEdit(&out[i], Agent, best.c)
		}
	}
	for i, l := range lines {
		if chosen[i] != nil {
			continue
		}
		if s, same, ok := alignedAt(i, norms, chosen); ok && !s.c.e.At.After(l.Time.Add(slack)) {
			if same {
				setEdit(&out[i], Agent, s.c)
			} else {
				setEdit(&out[i], Mixed, s.c)
			}
			continue
		}
		if l.Boundary && shallow {
			out[i].Kind = Unknown
			continue
		}
		low := before(l.Time)
		for _, c := range cands {
			if c.c.Op == loom.EditShell && c.e.At.After(low) && !c.e.At.After(l.Time.Add(slack)) {
				out[i].Kind = Unknown
				break
			}
		}
	}
	return out
}

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
	l.Agent, l.Model, l.Provider, l.Tool, l.At = e.Agent, e.Model, e.Provider, e.Tool, &at
	if c.rel != "" {
		l.From = c.rel
	}
}

// alignedAt finds the agent's line that stands where line i does: an
// agent's segment ends just above it (or starts just below it), and its
// run's line at the same distance is line i (same: a line too common to
// count on its own, such as a brace, that the agent wrote there) or is
// like it (a human changed it).
func alignedAt(i int, norms []string, chosen []*segment) (s *segment, same, ok bool) {
	for d := 1; d <= 3; d++ {
		for _, k := range []int{i - d, i + d} {
			if k < 0 || k >= len(chosen) || chosen[k] == nil {
				continue
			}
			s := chosen[k]
			j := s.j0 + (k - s.i0) + (i - k)
			run := s.c.runs[s.run]
			if j < 0 || j >= len(run) {
				continue
			}
			if norms[i] == run[j] {
				return s, true, true
			}
			if similar(norms[i], run[j]) >= 0.5 {
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
