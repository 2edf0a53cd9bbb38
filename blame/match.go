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
				c.raw, c.ctx = insertedIn(f.state, content)
			} else {
				c.raw = c.c.Added()
			}
			f.state, f.known = content, true
		case loom.EditChange:
			if !f.known && slices.ContainsFunc(c.c.Replace, func(r fileedit.Replacement) bool { return r.All }) {
				committed()
			}
			c.raw, c.places, c.ctx = changeRuns(c.c.Replace, f.state, f.known)
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
func changeRuns(rs []fileedit.Replacement, state []string, known bool) (runs [][]string, places []int, ctx []runCtx) {
	text := joinLines(state)
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
		rr, rc := insertedIn(fileedit.Lines(r.Old), fileedit.Lines(r.New))
		for _, run := range rr {
			runs, places = append(runs, run), append(places, n)
		}
		ctx = append(ctx, rc...)
		text = replace(text, r)
	}
	return runs, places, ctx
}

// runCtx is what stood around a run of lines an edit put in, in the
// text the edit wrote (Norm, nearest first): where lines alike stand
// at several places of the file, the place the edit wrote them is the
// one they stand beside.
type runCtx struct {
	above, below []string
}

// ctxLines is how many lines around a run its context keeps, each way.
const ctxLines = 3

// insertedIn is fileedit.Inserted of a and b, each run with the lines
// of b around it.
func insertedIn(a, b []string) (runs [][]string, ctx []runCtx) {
	m := fileedit.Match(a, b)
	for j := 0; j < len(m); {
		if m[j] >= 0 {
			j++
			continue
		}
		k := j
		for k < len(m) && m[k] < 0 {
			k++
		}
		var rc runCtx
		for i := j - 1; i >= 0 && i >= j-ctxLines; i-- {
			rc.above = append(rc.above, fileedit.Norm(b[i]))
		}
		for i := k; i < len(b) && i < k+ctxLines; i++ {
			rc.below = append(rc.below, fileedit.Norm(b[i]))
		}
		runs, ctx = append(runs, b[j:k]), append(ctx, rc)
		j = k
	}
	return runs, ctx
}

// anyPlaces is the places of a run whose edit replaced every
// occurrence of a text of a file whose content is not known.
const anyPlaces = 1 << 20

// replaced is the file state after an edit's replacements.
func replaced(state []string, rs []fileedit.Replacement) []string {
	text := joinLines(state)
	for _, r := range rs {
		text = replace(text, r)
	}
	return fileedit.Lines(text)
}

// joinLines is the text of a file's lines (fileedit.Lines), each with
// its line end, the last one's too: an edit's old text that ends the
// file ends with the file's last line end, and is found there.
func joinLines(state []string) string {
	if len(state) == 0 {
		return ""
	}
	return strings.Join(state, "\n") + "\n"
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

// commitTimes are the times of the commits the lines come from, in
// order.
type commitTimes []time.Time

func newCommitTimes(lines []blamed) commitTimes {
	var times commitTimes
	for _, l := range lines {
		if l.Commit != uncommitted {
			times = append(times, l.Time)
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	return times
}

// before is the time of the commit before one at t: when a change of
// the file before a line of t's commit was committed.
func (ts commitTimes) before(t time.Time) time.Time {
	i, _ := slices.BinarySearchFunc(ts, t, time.Time.Compare)
	if i == 0 {
		return time.Time{}
	}
	return ts[i-1]
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
