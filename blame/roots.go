package blame

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/paths"
)

// roots are where the repository's sessions saw it: here, the other
// roots its project's sessions recorded (another machine, before a
// move), and the roots of sessions recorded under another project at a
// path that is not on this machine whose edited files are this
// repository's (a clone elsewhere, a teammate's sessions): the
// repository's identity is its files' paths inside it. elsewhere counts
// the sessions of a project of this repository's name recorded at a
// path no edit of theirs could be matched to. facts are what it learnt
// of those roots from this machine rather than the store (answers.go).
func (b *Blamer) roots(ctx context.Context, g Git) (roots []string, elsewhere int, facts rootFacts) {
	roots = []string{g.Dir}
	add := func(r string) {
		if r != "" && !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	p, err := paths.DetectProject(g.Dir)
	if err != nil {
		p = loom.Project{}
	}
	facts.ProjectID, facts.ProjectName = p.ID, p.Name
	if p.ID != "" {
		if more, err := b.Store.ProjectRoots(ctx, b.UserID, p.ID); err == nil {
			for _, r := range more {
				add(r)
			}
		}
	}
	if b.Roots == nil {
		return roots, 0, facts
	}
	recorded, err := b.Roots.RecordedRoots(ctx, b.UserID)
	if err != nil {
		return roots, 0, facts
	}
	// The roots not on this machine are matched by their edits' paths,
	// read in one query for all of them (a store of fifty such roots
	// was fifty queries, a third of a short file's first blame).
	local := map[string]bool{}
	var dirs []string
	for _, r := range recorded {
		if slices.Contains(roots, r.Root) || r.ProjectID == p.ID && p.ID != "" || !filepath.IsAbs(r.Root) {
			continue
		}
		if _, err := os.Stat(filepath.Join(r.Root, ".git")); err == nil {
			local[r.Root] = true
		} else {
			dirs = append(dirs, r.Root)
		}
	}
	var tracked map[string]bool
	var away []loom.FileEdit
	var awayErr bool
	for _, r := range recorded {
		if slices.Contains(roots, r.Root) || r.ProjectID == p.ID && p.ID != "" || !filepath.IsAbs(r.Root) {
			continue
		}
		if local[r.Root] {
			// A work tree of this machine is its own repository, unless
			// it is this one's (the same first commit) and names itself
			// so: the remote a local clone was made from, the same name.
			same := b.sameRepo(ctx, g, r, p.Name)
			if same {
				add(r.Root)
			}
			facts.Roots = append(facts.Roots, rootFact{Root: r.Root, ProjectName: r.ProjectName, Git: true, Same: same})
			continue
		}
		facts.Roots = append(facts.Roots, rootFact{Root: r.Root, ProjectName: r.ProjectName})
		if tracked == nil {
			facts.Index = g.gitIndex(ctx)
			tracked = g.trackedFiles(ctx)
			away, awayErr = b.awayEdits(ctx, dirs, tracked)
		}
		if awayErr {
			continue
		}
		top, ok := matchRoot(under(away, r.Root), tracked)
		if ok {
			add(top)
			continue
		}
		if p.Name != "" && strings.EqualFold(r.ProjectName, p.Name) {
			elsewhere += r.Sessions
		}
	}
	return roots, elsewhere, facts
}

// awayEdits are the edits (bare, sorted by path) below dirs, the roots
// not on this machine, that matchRoot needs: first their paths alone
// (the path index, not the edits' rows), then the whole bare edits of
// those of dirs where a path ends in a file tracked here, the others'
// matching nothing whatever their operations.
func (b *Blamer) awayEdits(ctx context.Context, dirs []string, tracked map[string]bool) ([]loom.FileEdit, bool) {
	paths, err := b.Store.Edits(ctx, loom.EditQuery{UserID: b.UserID, Dirs: dirs, Bare: true, PathsOnly: true})
	if err != nil {
		return nil, true
	}
	slices.SortFunc(paths, func(a, b loom.FileEdit) int { return strings.Compare(a.Path, b.Path) })
	var maybe []string
	for _, d := range dirs {
		if anyTracked(under(paths, d), tracked) {
			maybe = append(maybe, d)
		}
	}
	if len(maybe) == 0 {
		return nil, false
	}
	es, err := b.Store.Edits(ctx, loom.EditQuery{UserID: b.UserID, Dirs: maybe, Bare: true})
	if err != nil {
		return nil, true
	}
	slices.SortFunc(es, func(a, b loom.FileEdit) int { return strings.Compare(a.Path, b.Path) })
	return es, false
}

// anyTracked says whether a path of es ends in a file tracked here.
func anyTracked(es []loom.FileEdit, tracked map[string]bool) bool {
	for _, e := range es {
		if _, ok := trackedSuffix(e.Path, tracked); ok {
			return true
		}
	}
	return false
}

// trackedSuffix finds the longest end of path (after one of its
// slashes) that names a file tracked here, and the root before it
// ("/" and the directories before that slash); ok false when none does.
// It cuts path in place: a first blame looks at a thousand paths of
// other machines' edits.
func trackedSuffix(path string, tracked map[string]bool) (root string, ok bool) {
	p := strings.TrimPrefix(path, "/")
	whole := p
	for {
		if tracked[p] {
			return "/" + strings.TrimSuffix(whole[:len(whole)-len(p)], "/"), true
		}
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return "", false
		}
		p = p[i+1:]
	}
}

// under are the edits of es (sorted by path) below dir: their paths sort
// between dir+"/" and dir+"0".
func under(es []loom.FileEdit, dir string) []loom.FileEdit {
	dir = strings.TrimSuffix(dir, "/")
	at := func(t string) int {
		i, _ := slices.BinarySearchFunc(es, t, func(e loom.FileEdit, t string) int { return strings.Compare(e.Path, t) })
		return i
	}
	return es[at(dir+"/"):at(dir+"0")]
}

// sameRepo says whether root r of this machine is a work tree of g's
// repository: one g names as its origin or of g's project's name (or
// directory's), whose first commit is g's.
func (b *Blamer) sameRepo(ctx context.Context, g Git, r loom.RecordedRoot, name string) bool {
	origin := ""
	if out, err := g.run(ctx, "config", "--get", "remote.origin.url"); err == nil {
		origin = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(string(out)), "/"), "/.git")
	}
	base := filepath.Base(r.Root)
	if origin != filepath.Clean(r.Root) && !strings.EqualFold(r.ProjectName, name) && base != filepath.Base(g.Dir) {
		return false
	}
	first := func(dir string) string {
		out, err := Git{Bin: g.Bin, Dir: dir}.run(ctx, "rev-list", "--max-parents=0", "HEAD")
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	mine := first(g.Dir)
	return mine != "" && mine == first(r.Root)
}

// matchRoot finds where a repository whose tracked files are tracked
// was when edits were made: the directory that, joined with tracked
// files' paths, gives the edits' paths, for two files or more (one when
// the edits changed one file alone).
func matchRoot(es []loom.FileEdit, tracked map[string]bool) (string, bool) {
	files := map[string]map[string]bool{} // root → files matched
	edited := map[string]bool{}
	for _, e := range es {
		if e.Op == loom.EditDelete || e.Path == "" {
			continue
		}
		edited[e.Path] = true
		if root, ok := trackedSuffix(e.Path, tracked); ok {
			if files[root] == nil {
				files[root] = map[string]bool{}
			}
			files[root][e.Path] = true
		}
	}
	best, n := "", 0
	for r, fs := range files {
		if len(fs) > n || len(fs) == n && r < best {
			best, n = r, len(fs)
		}
	}
	return best, n >= 2 || n == 1 && len(edited) == 1
}

// relTo is path in the repository seen at one of roots, ok false when
// it is in none.
func relTo(roots []string, path string) (string, bool) {
	r := rootOf(roots, path)
	if r == "" {
		return "", false
	}
	return strings.TrimPrefix(path, strings.TrimSuffix(r, "/")+"/"), true
}

// rootOf is the one of roots path is in, "" when none.
func rootOf(roots []string, path string) string {
	for _, r := range roots {
		if strings.HasPrefix(path, strings.TrimSuffix(r, "/")+"/") {
			return r
		}
	}
	return ""
}

// Recorded says whether any session of the user worked in g's
// repository, here or at another path its files are matched to.
func (b *Blamer) Recorded(ctx context.Context, g Git) (bool, error) {
	if err := b.index(ctx); err != nil {
		return false, err
	}
	_, repo, elsewhere, _, err := b.repoEdits(ctx, g)
	return len(repo) > 0 || elsewhere > 0, err
}

// foundRoots are a work tree's roots, its sessions recorded elsewhere
// and what was learnt of them from this machine.
type foundRoots struct {
	roots     []string
	elsewhere int
	facts     rootFacts
}
