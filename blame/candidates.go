package blame

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
)

// cand is an edit that may have written lines of the file: its
// change's text, and the runs of lines it put in (refine makes those of
// a write exact).
type cand struct {
	e    loom.FileEdit
	rel  string // the file it changed, in the repository
	root string // the root of the repository it was made at
	c    fileedit.Change
	runs [][]string // Norm of each line
	raw  [][]string
	// places are how many lines of the file each run's lines may
	// account for: one, but for an edit of every occurrence of a text
	// (nil: one each).
	places []int
	// ctx are the lines around each run where the edit wrote it (nil:
	// not known).
	ctx []runCtx
	// foreign marks an edit of another file than this one (by any of
	// its names); dest, that the edit's session moved or rewrote this
	// file by a command (its lines may have come from the other file
	// that way).
	foreign, dest bool
}

// placesOf is how many lines of the file each line of run r may
// account for.
func (c *cand) placesOf(r int) int {
	if r < len(c.places) {
		return c.places[r]
	}
	return 1
}

// repoEdits are the roots of g's repository and the edits of every
// file in it, bare (loom.EditQuery.Bare): what tells which files'
// edits to read whole; elsewhere is roots' count of sessions of the
// repository that could not be matched to it, facts what was learnt of
// the roots from this machine.
func (b *Blamer) repoEdits(ctx context.Context, g Git) ([]string, []loom.FileEdit, int, rootFacts, error) {
	if g.shared != nil {
		r := g.shared.repoEdits(func() repoSide {
			var r repoSide
			r.roots, r.repo, r.elsewhere, r.facts, r.err = b.readRepoEdits(ctx, g)
			return r
		})
		return r.roots, r.repo, r.elsewhere, r.facts, r.err
	}
	return b.readRepoEdits(ctx, g)
}

// readRepoEdits is repoEdits, read from the store.
func (b *Blamer) readRepoEdits(ctx context.Context, g Git) ([]string, []loom.FileEdit, int, rootFacts, error) {
	// The edits here are read while the other roots are looked for.
	ch := make(chan foundRoots, 1)
	if f, ok := b.found[g.Dir]; ok {
		ch <- f
	} else {
		go func() {
			r, n, facts := b.roots(ctx, g)
			ch <- foundRoots{r, n, facts}
		}()
	}
	repo, err := b.Store.Edits(ctx, loom.EditQuery{UserID: b.UserID, Under: g.Dir, Bare: true})
	f := <-ch
	if err != nil {
		return nil, nil, 0, rootFacts{}, err
	}
	if b.found == nil {
		b.found = map[string]foundRoots{}
	}
	b.found[g.Dir] = f
	for _, r := range f.roots[1:] {
		es, err := b.Store.Edits(ctx, loom.EditQuery{UserID: b.UserID, Under: r, Bare: true})
		if err != nil {
			return nil, nil, 0, rootFacts{}, err
		}
		repo = append(repo, es...)
	}
	return f.roots, repo, f.elsewhere, f.facts, nil
}

// candidates are the edits of the file's lineage (its names in the
// commits that brought its lines in, and the names an agent moved it
// from), and of other files of the repository whose lines it holds (a
// move or a copy git did not see: foreign, credited only where the
// repository's history shows the lines came from that file); any says
// whether the repository has edits at all. common are the lines (by
// Norm) the edits of many files put in: too common to tell a move by.
func (b *Blamer) candidates(ctx context.Context, g Git, sh *shared, roots []string, repo []loom.FileEdit, rel string, lines []blamed) (cands []*cand, common map[string]bool, any bool, err error) {
	if len(repo) == 0 {
		return nil, nil, false, nil
	}
	lineage := map[string]bool{rel: true}
	for _, l := range lines {
		lineage[l.Path] = true
	}
	// Moves an agent made bring the file's earlier name in, copies the
	// file copied (its edits up to the copy), and the file copied its
	// own earlier names, by the renames git saw: a copy of a file a
	// human renamed holds the lines its sessions wrote under the old
	// name, which git blame of the copy does not follow.
	followed := maps.Clone(lineage)
	for {
		copiedInto(roots, repo, lineage)
		grew := false
		for _, f := range slices.Sorted(maps.Keys(lineage)) {
			if followed[f] {
				continue
			}
			followed[f] = true
			for _, n := range g.earlierNames(ctx, f) {
				if !lineage[n] {
					lineage[n], grew = true, true
				}
			}
		}
		if !grew {
			break
		}
	}
	want := wantedFiles(roots, repo, lineage, linePairs(lines))
	var filesOf map[uint64]map[string]bool
	if sh != nil {
		filesOf = sh.lineFiles(roots, repo)
	} else {
		// One file's: only its own lines are looked up.
		only := make(map[uint64]bool, len(lines))
		for _, l := range lines {
			only[fileedit.Hash(l.Text)] = true
		}
		filesOf = lineFiles(roots, repo, only)
	}
	common = map[string]bool{}
	for _, l := range lines {
		if fs := filesOf[fileedit.Hash(l.Text)]; len(fs) >= commonFiles {
			common[fileedit.Norm(l.Text)] = true
		}
	}
	if len(want) == 0 {
		return nil, common, true, nil
	}
	es, err := b.editsOf(ctx, sh, slices.Sorted(maps.Keys(want)))
	if err != nil {
		return nil, nil, true, err
	}
	return candsOf(sh, roots, es, lineage), common, true, nil
}

// linePairs are the hashes of the file's pairs of lines in a row that
// say something, as wantedFiles looks them up.
func linePairs(lines []blamed) map[uint64]bool {
	have := map[uint64]bool{}
	var prev uint64
	for _, l := range lines {
		h := fileedit.Hash(l.Text)
		if prev != 0 && fileedit.Norm(l.Text) != "" {
			have[prev^h*31] = true
		}
		prev = h
		if fileedit.Norm(l.Text) == "" {
			prev = 0
		}
	}
	return have
}

// wantedFiles are the files (as the edits name them) whose edits are
// read: those of the lineage, and other files whose added lines this
// one holds, two in a row (have: linePairs).
func wantedFiles(roots []string, repo []loom.FileEdit, lineage map[string]bool, have map[uint64]bool) map[string]bool {
	want := map[string]bool{}
	for _, e := range repo {
		r, ok := relTo(roots, e.Path)
		if !ok || e.Op == loom.EditMove || e.Op == loom.EditDelete {
			continue
		}
		if _, ok := ofLineage(r, e.Op, lineage); ok {
			want[e.Path] = true
			continue
		}
		for i := 1; i < len(e.Lines); i++ {
			if e.Lines[i-1] != 0 && e.Lines[i] != 0 && have[e.Lines[i-1]^e.Lines[i]*31] {
				want[e.Path] = true
				break
			}
		}
	}
	return want
}

// editsOf are the edits of files (as the edits name them), with their
// parts.
func (b *Blamer) editsOf(ctx context.Context, sh *shared, files []string) ([]loom.FileEdit, error) {
	if sh != nil && b.Team == nil {
		// A team's stores give their edits in an order of their own.
		return sh.editsOf(ctx, b.Store, b.UserID, files)
	}
	return b.Store.Edits(ctx, loom.EditQuery{UserID: b.UserID, Paths: files, Parts: true})
}

// candsOf are the candidates of edits es: each edit's change, read from
// its message's parts, foreign when it is of a file outside the
// lineage (or of a copy's source after the copy).
func candsOf(sh *shared, roots []string, es []loom.FileEdit, lineage map[string]bool) []*cand {
	// Sessions that moved, copied or rewrote this file by a command: their
	// edits of other files may be what it holds.
	// A command of many files (a glob) tells nothing of where this
	// one's lines came from.
	dest := map[string]bool{}
	for _, e := range es {
		if r, _ := relTo(roots, e.Path); lineage[r] && (e.Op == loom.EditMove || e.Op == loom.EditShell || e.Op == loom.EditProgram) {
			dest[e.SessionID] = true
		}
	}
	copied := copyTimes(roots, es, lineage)
	// Each message's parts are decoded once, for all the edits its
	// calls made.
	changes := map[string][]fileedit.Change{}
	var cands []*cand
	for _, e := range es {
		if e.Op == loom.EditMove || e.Op == loom.EditDelete {
			continue
		}
		r, _ := relTo(roots, e.Path)
		if name, ok := ofLineage(r, e.Op, lineage); ok && name != r {
			// A command's glob: the name of the lineage it matched.
			r = name
		} else if isGlob(r) {
			continue
		}
		foreign := !lineage[r] || !copied[r].IsZero() && e.At.After(copied[r])
		if foreign && (e.Op == loom.EditShell || e.Op == loom.EditProgram) {
			// What a command did to another file says nothing of this one.
			continue
		}
		cs, seen := changes[e.MessageID]
		if !seen {
			if sh != nil {
				cs = sh.messageChanges(e.MessageID, e.Parts)
			} else {
				cs, _ = fileedit.Changes(e.Parts)
			}
			changes[e.MessageID] = cs
		}
		c, ok := fileedit.Pick(&e, cs)
		if !ok {
			continue
		}
		e.Parts = nil
		cands = append(cands, &cand{e: e, rel: r, root: rootOf(roots, e.Path), c: c, foreign: foreign, dest: dest[e.SessionID]})
	}
	return cands
}

// ofLineage is the name of the file's lineage an edit of file r (op)
// is of: r itself, or for a command's glob (sed -i … *.go, a find or
// xargs: DIR/**), the name it matches.
func ofLineage(r, op string, lineage map[string]bool) (string, bool) {
	if lineage[r] {
		return r, true
	}
	if op != loom.EditShell || !isGlob(r) {
		return "", false
	}
	re := globRegexp(r)
	if re == nil {
		return "", false
	}
	for _, name := range slices.Sorted(maps.Keys(lineage)) {
		if re.MatchString(name) {
			return name, true
		}
	}
	return "", false
}

// isGlob says whether a path is a shell's pattern of names.
func isGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// globRegexp is the regular expression of a glob of the shell's, with
// ** any number of directories (find's and xargs' DIR/**); nil for one
// that cannot be read.
func globRegexp(g string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(g); i++ {
		switch c := g[i]; {
		case strings.HasPrefix(g[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(g[i:], ']')
			if j < 0 {
				return nil
			}
			class := g[i+1 : i+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil
	}
	return re
}

// lineFiles are the files of the repository (seen at roots) each line
// hash of its edits was put in by, up to commonFiles of them: of the
// hashes in only, or of all when only is nil.
func lineFiles(roots []string, repo []loom.FileEdit, only map[uint64]bool) map[uint64]map[string]bool {
	filesOf := map[uint64]map[string]bool{}
	for _, e := range repo {
		r, ok := relTo(roots, e.Path)
		if !ok || e.Op == loom.EditMove || e.Op == loom.EditDelete {
			continue
		}
		for _, h := range e.Lines {
			if h == 0 || only != nil && !only[h] {
				continue
			}
			if filesOf[h] == nil {
				filesOf[h] = map[string]bool{}
			}
			if len(filesOf[h]) < commonFiles {
				filesOf[h][r] = true
			}
		}
	}
	return filesOf
}

// earlierNames are the names git's history gave file f before (its
// renames, followed as git log --follow does); none if git cannot tell.
func (g Git) earlierNames(ctx context.Context, f string) []string {
	out, err := g.run(ctx, "log", "--follow", "--name-only", "--format=", "--", f)
	if err != nil {
		return nil
	}
	var names []string
	for _, n := range strings.Split(string(out), "\n") {
		if n != "" && n != f && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// copiedInto adds to lineage the files the file's lines came from by an
// agent's move (its earlier names) or copy (cp: the file copied).
func copiedInto(roots []string, repo []loom.FileEdit, lineage map[string]bool) {
	for changed := true; changed; {
		changed = false
		for _, e := range repo {
			to, ok1 := relTo(roots, e.Path)
			from, ok2 := relTo(roots, e.From)
			if ok1 && ok2 && lineage[to] && !lineage[from] && (e.Op == loom.EditMove || e.Op == loom.EditShell) {
				lineage[from], changed = true, true
			}
		}
	}
}

// copyTimes are when each file copied into the file (cp, among es, to
// a name of its lineage) was last copied: its edits after that are not
// the copy's.
func copyTimes(roots []string, es []loom.FileEdit, lineage map[string]bool) map[string]time.Time {
	copied := map[string]time.Time{}
	for _, e := range es {
		to, _ := relTo(roots, e.Path)
		if from, ok := relTo(roots, e.From); ok && lineage[to] && e.Op == loom.EditShell && e.At.After(copied[from]) {
			copied[from] = e.At
		}
	}
	return copied
}

// commonFiles is in how many files' edits a line must be to be too
// common to tell where it came from.
const commonFiles = 3
