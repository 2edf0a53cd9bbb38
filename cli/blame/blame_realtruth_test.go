package blame_test

import (
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/loomhq/loom/fileedit"
)

// The ground truth of an agent's session is what the program left on
// disk, not what its script asked for: after each run every file of the
// work tree is compared with the ledger from before the run, and the
// lines that were not there are the agent's. Each agent's line carries
// the path it came by (a write, an edit, a copy, a move, a sed -i, an
// edit in another worktree...), and every suite adds its counts to one
// figure, overall and per path, that TestMain prints and holds to the
// bounds of issue 83.

// snapshot is the ledger's files as they are, for ran.
func (l *ledger) snapshot() map[string][]tline {
	s := make(map[string][]tline, len(l.files))
	for rel, ls := range l.files {
		s[rel] = slices.Clone(ls)
	}
	return s
}

// ran sets the ledger to what an agent's session left on disk, given
// the ledger before it (snap): a file it changed keeps the lines it
// held before (as fileedit.Match aligns them), the others are the
// agent's; a file it created is a copy or a move when it holds most
// lines of a file the ledger knows (their lines keep whose they were),
// else all the agent's. label names the path of each agent's line it
// put in, and of every agent's line of a file it created.
func (l *ledger) ran(snap map[string][]tline, label func(rel, text string) string) {
	l.t.Helper()
	disk := l.onDisk()
	out := map[string][]tline{}
	var created []string
	for rel, text := range disk {
		old, ok := snap[rel]
		if !ok {
			created = append(created, rel)
			continue
		}
		out[rel] = l.aligned(rel, old, fileedit.Lines(text), label, false)
	}
	slices.Sort(created)
	for _, rel := range created {
		nl := fileedit.Lines(disk[rel])
		// The source of a copy or a move: the file before the session
		// or, for a copy of a file the session changed, as it left it;
		// the one that holds most of its lines that say something (a
		// package clause and a few braces in common is no copy).
		says := 0
		for _, s := range nl {
			if saysSomething(s) {
				says++
			}
		}
		var src []tline
		best := 0
		for _, cand := range []map[string][]tline{snap, out} {
			for _, name := range slices.Sorted(maps.Keys(cand)) {
				ls := cand[name]
				n := 0
				for j, i := range fileedit.Match(texts(ls), nl) {
					if i >= 0 && saysSomething(nl[j]) {
						n++
					}
				}
				if n > best && 2*n > says {
					src, best = ls, n
				}
			}
		}
		out[rel] = l.aligned(rel, src, nl, label, true)
	}
	for rel, ls := range out {
		if i := slices.IndexFunc(ls, func(x tline) bool { return x.who == "agent" && x.path != "" }); i >= 0 {
			l.labelled(rel, ls[i].path)
		}
	}
	l.files = out
}

// aligned is nl with the lines it holds of old kept whose they were and
// the rest the agent's by label; relabel gives every agent's line the
// label (a file the session created as a copy or a move of another).
func (l *ledger) aligned(rel string, old []tline, nl []string, label func(rel, text string) string, relabel bool) []tline {
	m := fileedit.Match(texts(old), nl)
	ls := make([]tline, len(nl))
	for j, s := range nl {
		if m[j] >= 0 {
			ls[j] = tline{s, old[m[j]].who, old[m[j]].path}
			if relabel && ls[j].who == "agent" {
				ls[j].path = label(rel, s)
			}
			continue
		}
		ls[j] = tline{s, "agent", label(rel, s)}
	}
	return ls
}

// saysSomething is whether a line has six letters or digits or more.
func saysSomething(s string) bool {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return n >= 6
}

func texts(ls []tline) []string {
	out := make([]string, len(ls))
	for i, x := range ls {
		out[i] = x.text
	}
	return out
}

// onDisk is every file of the work tree but git's own and those of a
// directory whose name starts with a dot (an agent's settings), by its
// path from the top.
func (l *ledger) onDisk() map[string]string {
	l.t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(l.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != l.dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() || d.Name() == ".git" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(l.dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		l.t.Fatal(err)
	}
	return files
}

// asked checks that the agent made what it was asked to: each file of
// want (the ledger as the script would leave it) is on disk as want has
// it.
func (l *ledger) asked(want map[string][]tline) {
	l.t.Helper()
	for _, rel := range slices.Sorted(maps.Keys(want)) {
		var b strings.Builder
		for _, x := range want[rel] {
			b.WriteString(x.text + "\n")
		}
		l.is(rel, b.String())
	}
}

// is checks that rel on disk is want.
func (l *ledger) is(rel, want string) {
	l.t.Helper()
	got, err := os.ReadFile(filepath.Join(l.dir, rel))
	if err != nil {
		l.t.Fatalf("the agent did not leave %s: %v", rel, err)
	}
	if string(got) != want {
		l.t.Fatalf("%s on disk is not what the agent was asked to make:\n%s\nwant:\n%s", rel, got, want)
	}
}

// one labels every line with path.
func one(path string) func(rel, text string) string {
	return func(string, string) string { return path }
}

// byFile labels a file's lines with the path paths gives it, def for a
// file it does not name.
func byFile(def string, paths map[string]string) func(rel, text string) string {
	return func(rel, _ string) string {
		if p, ok := paths[rel]; ok {
			return p
		}
		return def
	}
}

// figure is a count of agents' lines: those loom named an agent's that
// were (tp), that were not (fp), and that it did not (fn).
type figure struct{ tp, fp, fn int }

// precision and recall are 1 where there is nothing to count: a path of
// no agent's line loom found none in, none it could miss.
func (f figure) precision() float64 { return ratio(f.tp, f.tp+f.fp) }
func (f figure) recall() float64    { return ratio(f.tp, f.tp+f.fn) }

func ratio(n, of int) float64 {
	if of == 0 {
		return 1
	}
	return float64(n) / float64(of)
}

// truth is every suite's figure, by path and by suite, and the files
// no session touched with the agents' lines loom found in them.
var truth = struct {
	sync.Mutex
	byPath, bySuite  map[string]*figure
	untouched, stray int
}{byPath: map[string]*figure{}, bySuite: map[string]*figure{}}

// tally adds a line's outcome to the figure of its path and suite.
func tally(suite, path string, tp, fp, fn bool) {
	truth.Lock()
	defer truth.Unlock()
	for _, f := range []*figure{at(truth.byPath, path), at(truth.bySuite, suite)} {
		switch {
		case tp:
			f.tp++
		case fp:
			f.fp++
		case fn:
			f.fn++
		}
	}
}

func at(m map[string]*figure, k string) *figure {
	if m[k] == nil {
		m[k] = &figure{}
	}
	return m[k]
}

// untouchedFile counts a file no session touched and the agents' lines
// loom found in it.
func untouchedFile(stray int) {
	truth.Lock()
	defer truth.Unlock()
	truth.untouched++
	truth.stray += stray
}

// The bounds of the figure over every real agent's suite (issue 83).
const (
	truthPrecision = 0.99
	truthRecall    = 0.95
	truthPath      = 0.9
)

// reportTruth writes the figure of the suites that ran, overall and by
// path and suite, to w and says whether it is within the bounds; with
// no suite run it says nothing.
func reportTruth(w io.Writer) bool {
	truth.Lock()
	defer truth.Unlock()
	if len(truth.bySuite) == 0 {
		return true
	}
	var all figure
	for _, f := range truth.bySuite {
		all.tp, all.fp, all.fn = all.tp+f.tp, all.fp+f.fp, all.fn+f.fn
	}
	ok := true
	line := func(name string, f figure, bound float64) {
		mark := ""
		if f.precision() < bound || f.recall() < bound {
			mark, ok = "  BELOW", false
		}
		fmt.Fprintf(w, "  %-34s precision %.3f (%d/%d)  recall %.3f (%d/%d)%s\n", name,
			f.precision(), f.tp, f.tp+f.fp, f.recall(), f.tp, f.tp+f.fn, mark)
	}
	fmt.Fprintln(w, "blame of the real agents' runs, agents' lines over every suite that ran:")
	line("all", all, 0)
	if all.precision() < truthPrecision || all.recall() < truthRecall {
		fmt.Fprintf(w, "  BELOW: want precision %.2f and recall %.2f overall\n", truthPrecision, truthRecall)
		ok = false
	}
	fmt.Fprintln(w, "by path:")
	for _, k := range slices.Sorted(maps.Keys(truth.byPath)) {
		line(k, *truth.byPath[k], truthPath)
	}
	fmt.Fprintln(w, "by suite:")
	for _, k := range slices.Sorted(maps.Keys(truth.bySuite)) {
		line(k, *truth.bySuite[k], 0)
	}
	fmt.Fprintf(w, "files no session touched: %d, agents' lines loom found in them: %d\n", truth.untouched, truth.stray)
	if truth.stray > 0 {
		ok = false
	}
	return ok
}
