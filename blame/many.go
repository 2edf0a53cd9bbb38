package blame

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
	"github.com/loomhq/loom/internal/gitindex"
)

// shared is what the blames of many files of one work tree in one call
// (Summarize) share, asked of git and the store once rather than once a
// file: git's answers that do not change while the call runs (objects,
// the log of files, the work trees, the notes, HEAD and each file's
// object in it, the files' whole blames, run beforehand on every core)
// and the store's (the repository's edits, each file's edits with their
// messages, each message's changes decoded, the runs of lines each
// file's edits put in). A blame of one file has none: what it asks is
// asked once anyway. The answers are those each blame would get on its
// own (TestSummaryIsFilesBlamed).
type shared struct {
	mu    sync.Mutex
	shows map[string]*answer
	logs  map[string]*answer // git's output, by its arguments
	// cat and tree are git cat-file --batch, for the shows, and git
	// diff-tree --stdin, for the files of a commit (batch.go).
	cat, tree *pipe
	others    map[string]bool // the work tree list, once read
	noted     map[string]string
	// notedRead says noted was read (nil is an answer).
	notedRead bool
	// probes are HEAD and each file's object in it (ls-tree), by file;
	// probed says they were read (none when HEAD or the tree could
	// not be).
	probes map[string]probed
	// gitDir is the repository's git directory, when probeAll read it.
	gitDir string
	// blames are whole blames run beforehand, by commit and file.
	blames map[string][]blamed
	// repo is the store's side of the repository (repoEdits), once,
	// and the files each line of its edits was put in by (lineFiles).
	repo    *repoSide
	filesOf map[uint64]map[string]bool
	// edits are each file's edits with their messages' parts (an
	// absolute path), of one's own store.
	edits map[string][]loom.FileEdit
	// changes are each message's changes, decoded from its parts.
	changes map[string][]fileedit.Change
	// runs are the runs of lines found for a file's edits (refine),
	// by refineKey.
	runs map[string][]refined
}

// repoSide is what repoEdits found.
type repoSide struct {
	roots     []string
	repo      []loom.FileEdit
	elsewhere int
	facts     rootFacts
	err       error
}

// refined is what refine found for one edit.
type refined struct {
	raw, runs [][]string
	places    []int
	ctx       []runCtx
}

func newShared() *shared {
	return &shared{shows: map[string]*answer{}, logs: map[string]*answer{}, blames: map[string][]blamed{},
		cat:   &pipe{args: []string{"cat-file", "--batch"}},
		tree:  &pipe{args: slices.Concat([]string{"diff-tree", "--stdin"}, changedArgs)},
		edits: map[string][]loom.FileEdit{}, changes: map[string][]fileedit.Change{}, runs: map[string][]refined{}}
}

// show is Show through the shared answers, read through git cat-file
// --batch.
func (s *shared) show(ctx context.Context, g Git, rev, rel string) ([]byte, error) {
	k := rev + ":" + rel
	return s.once(s.shows, k, func() ([]byte, error) {
		b, missing, ok := s.catBlob(ctx, g, k)
		switch {
		case ok && missing:
			return nil, fmt.Errorf("git show: %s is not in the repository", k)
		case ok:
			return b, nil
		}
		b, err := g.run(ctx, "show", k)
		if ctx.Err() != nil {
			return nil, ctx.Err() // not kept: the next asks again
		}
		return b, err
	}, func(error) bool { return ctx.Err() == nil })
}

// log is git with args through the shared answers: a command whose
// output depends on commits alone (log, diff-tree of a commit).
func (s *shared) log(ctx context.Context, g Git, args []string) ([]byte, error) {
	return s.once(s.logs, strings.Join(args, "\x00"), func() ([]byte, error) {
		return g.run(ctx, args...)
	}, func(err error) bool { return err == nil })
}

// changedIn is the files commit changed (history.changedIn) through
// the shared answers, asked of git diff-tree --stdin.
func (s *shared) changedIn(ctx context.Context, g Git, commit string) ([]byte, error) {
	return s.once(s.logs, "diff-tree\x00"+commit, func() ([]byte, error) {
		if out, ok := s.commitFiles(ctx, g, commit); ok {
			return out, nil
		}
		return g.run(ctx, slices.Concat([]string{"diff-tree"}, changedArgs, []string{commit})...)
	}, func(err error) bool { return err == nil })
}

// changedArgs are git diff-tree's options that list the files a commit
// changed, from each parent (the first commit from none).
var changedArgs = []string{"--no-commit-id", "--name-only", "--no-renames", "-r", "-m", "--root"}

// answer is git's answer to one question, asked once however many ask
// it at the same time.
type answer struct {
	done chan struct{}
	b    []byte
	err  error
	kept bool
}

// once is ask's answer to k, kept in m when keep says so: those who ask
// k while it is asked wait for its answer (and ask again when it was
// not kept).
func (s *shared) once(m map[string]*answer, k string, ask func() ([]byte, error), keep func(error) bool) ([]byte, error) {
	s.mu.Lock()
	a, asked := m[k]
	if !asked {
		a = &answer{done: make(chan struct{})}
		m[k] = a
	}
	s.mu.Unlock()
	if asked {
		<-a.done
		if a.kept {
			return a.b, a.err
		}
		return ask()
	}
	a.b, a.err = ask()
	if a.kept = keep(a.err); !a.kept {
		s.mu.Lock()
		delete(m, k)
		s.mu.Unlock()
	}
	close(a.done)
	return a.b, a.err
}

// close ends the git processes the answers were read from.
func (s *shared) close() {
	s.cat.close()
	s.tree.close()
}

// probeAll reads, in one git process each, whether the repository is a
// shallow clone, its git directory and HEAD, and the object of every
// file under dir at HEAD: each file's probe (workTreeAgesAt). Nothing
// is kept when git cannot tell them (no HEAD): each file asks then.
func (s *shared) probeAll(ctx context.Context, g Git, dir string) {
	// From the repository's files where they tell it for certain (the
	// index holding HEAD's tree): two git processes fewer.
	if g.Bin == "" || g.Bin == "git" {
		if d, blobs, ok := gitindex.ProbeTree(g.Dir); ok {
			base := probed{shallow: d.Shallow, gitDir: d.GitDir, head: d.Head}
			probes := make(map[string]probed, len(blobs))
			for file, blob := range blobs {
				p := base
				p.blob = blob
				probes[file] = p
			}
			s.probes, s.gitDir = probes, d.GitDir
			return
		}
	}
	out, err := g.run(ctx, "rev-parse", "--is-shallow-repository", "--absolute-git-dir", "HEAD")
	if err != nil {
		return
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(f) != 3 {
		return
	}
	base := probed{shallow: f[0] == "true", gitDir: f[1], head: f[2]}
	args := []string{"ls-tree", "-r", "-z", "--full-tree", base.head, "--"}
	if dir != "" {
		args = append(args, dir)
	}
	if out, err = g.run(ctx, args...); err != nil {
		return
	}
	probes := map[string]probed{}
	for _, ent := range strings.Split(string(out), "\x00") {
		// "<mode> SP <type> SP <object> TAB <file>"
		meta, file, ok := strings.Cut(ent, "\t")
		fs := strings.Fields(meta)
		if !ok || len(fs) != 3 || fs[1] != "blob" {
			continue
		}
		p := base
		p.blob = fs[2]
		probes[file] = p
	}
	s.probes, s.gitDir = probes, base.gitDir
}

// probe is the probe of rel read by probeAll, ok false when it has
// none.
func (s *shared) probe(rel string) (probed, bool) {
	p, ok := s.probes[rel]
	return p, ok
}

// blameAhead runs the whole blames the files will need (those at HEAD
// the line-age cache holds nothing of) on every core at once, before
// the files are matched one by one: git's blames are most of a
// directory's time and each is one process of its own.
func (b *Blamer) blameAhead(ctx context.Context, g Git, files []string) {
	s := g.shared
	if b.Cache == "" || s.probes == nil {
		return
	}
	c := b.ageCache()
	flags := g.ageFlags()
	var todo []string
	for _, f := range files {
		p, ok := s.probes[f]
		if !ok || p.shallow || merging(p.gitDir) {
			continue
		}
		if e := c.load(g.Dir, f, flags); e != nil {
			continue // the cache tells it, or the commits since its entry do
		}
		if b, err := os.ReadFile(filepath.Join(g.Dir, filepath.FromSlash(f))); err != nil || binary(b) {
			continue // left out of the summary
		}
		todo = append(todo, f)
	}
	s.blameBeforehand(ctx, g, todo, func(f string) (string, bool) { return s.probes[f].head, true })
}

// blameBeforehand runs git's whole blame of each of files at the commit
// at gives it (none when at says no) on every core at once, for the
// file's own blame to take (blamed).
func (s *shared) blameBeforehand(ctx context.Context, g Git, files []string, at func(f string) (string, bool)) {
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(runtime.NumCPU(), len(files)) {
		wg.Go(func() {
			for f := range work {
				rev, ok := at(f)
				if !ok {
					continue
				}
				// One that fails is left to the file's own blame, which
				// says why.
				if lines, err := g.blameAt(ctx, rev, f); err == nil {
					s.mu.Lock()
					s.blames[rev+"\x00"+f] = lines
					s.mu.Unlock()
				}
			}
		})
	}
	for _, f := range files {
		if ctx.Err() != nil {
			break
		}
		work <- f
	}
	close(work)
	wg.Wait()
}

// blameAheadAt runs the whole blames of files at commit rev on every
// core at once, as blameAhead those of the work tree's files, binary
// ones left out.
func (b *Blamer) blameAheadAt(ctx context.Context, g Git, files []string, rev string) {
	var c *ageCache
	flags := g.ageFlags()
	if b.Cache != "" {
		c = b.ageCache()
	}
	g.shared.blameBeforehand(ctx, g, files, func(f string) (string, bool) {
		if c != nil {
			if e := c.load(g.Dir, f, flags); e != nil {
				return "", false // the cache tells it, or the commits since its entry do (revAges)
			}
		}
		cont, err := g.Show(ctx, rev, f)
		return rev, err == nil && !binary(cont)
	})
}

// blameEach blames each of files at rev (as the work tree has them when
// rev is ""), on every core at once (one at a time with a team's
// stores), each file's answer or error at its place.
func (b *Blamer) blameEach(ctx context.Context, g Git, files []string, rev string) ([]*Result, []error) {
	results, errs := make([]*Result, len(files)), make([]error, len(files))
	// What the blames would each set on first use is set before they
	// run.
	if err := b.index(ctx); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return results, errs
	}
	if b.Cache != "" {
		b.ageCache()
	}
	workers := runtime.NumCPU()
	if b.Team != nil {
		workers = 1
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(files)) {
		wg.Go(func() {
			for i := range next {
				results[i], errs[i] = b.Blame(ctx, g, files[i], rev)
			}
		})
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return results, errs
}

// blamed is the whole blame of rel at rev run beforehand, taken (it is
// asked for once).
func (s *shared) blamed(rev, rel string) ([]blamed, bool) {
	if s == nil {
		return nil, false
	}
	k := rev + "\x00" + rel
	s.mu.Lock()
	defer s.mu.Unlock()
	lines, ok := s.blames[k]
	delete(s.blames, k)
	return lines, ok
}

// notedCommits is NotedCommits, read once.
func (s *shared) notedCommits(ctx context.Context, g Git) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.notedRead {
		s.noted, s.notedRead = g.notedCommits(ctx), true
	}
	return s.noted
}

// worktrees are the work trees git lists of the repository, read once.
func (s *shared) worktrees(read func() map[string]bool) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.others == nil {
		s.others = read()
	}
	return s.others
}

// repoEdits is Blamer.repoEdits, once.
func (s *shared) repoEdits(read func() repoSide) repoSide {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.repo == nil {
		r := read()
		s.repo = &r
	}
	return *s.repo
}

// lineFiles is lineFiles of the repository's edits, found once: roots
// and repo are repoEdits', the same for every file.
func (s *shared) lineFiles(roots []string, repo []loom.FileEdit) map[uint64]map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.filesOf == nil {
		s.filesOf = lineFiles(roots, repo, nil)
	}
	return s.filesOf
}

// editsOf are the edits with their messages' parts of files paths: those
// of a file asked before as they were read then, the others read now in
// one query. They come in the order the store gives any query's: by
// time, message and place in it (sqlstore.OwnEdits).
func (s *shared) editsOf(ctx context.Context, es loom.EditStore, user string, paths []string) ([]loom.FileEdit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var missing []string
	for _, p := range paths {
		if _, ok := s.edits[p]; !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		got, err := es.Edits(ctx, loom.EditQuery{UserID: user, Paths: missing, Parts: true})
		if err != nil {
			return nil, err
		}
		for _, p := range missing {
			s.edits[p] = []loom.FileEdit{}
		}
		for _, e := range got {
			s.edits[e.Path] = append(s.edits[e.Path], e)
		}
	}
	var out []loom.FileEdit
	for _, p := range paths {
		out = append(out, s.edits[p]...)
	}
	slices.SortStableFunc(out, func(a, b loom.FileEdit) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		if c := strings.Compare(a.MessageID, b.MessageID); c != 0 {
			return c
		}
		return a.N - b.N
	})
	return out, nil
}

// messageChanges are the changes message id's parts make, decoded once.
func (s *shared) messageChanges(id string, parts []byte) []fileedit.Change {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, ok := s.changes[id]
	if !ok {
		cs, _ = fileedit.Changes(parts)
		s.changes[id] = cs
	}
	return cs
}

// refinedBefore gives the edits of cands whose runs were found for
// another blame those runs, and returns the others, those refine is to
// find; done keeps what refine found for them.
func (s *shared) refinedBefore(cands []*cand) (todo []*cand, done func()) {
	var since time.Time
	byFile := map[string][]*cand{}
	var files []string
	for _, c := range cands {
		if c.c.Op == loom.EditWrite && since.IsZero() {
			since = c.e.At // as fileCommits takes it
		}
		if byFile[c.rel] == nil {
			files = append(files, c.rel)
		}
		byFile[c.rel] = append(byFile[c.rel], c)
	}
	// The commits refine reads are those of all the files (fileCommits):
	// the runs rest on which files those are, and from when.
	sorted := slices.Sorted(slices.Values(files))
	scope := strconv.FormatInt(since.UnixNano(), 10) + "\x00" + strings.Join(sorted, "\x00")
	keys := map[string]string{}
	s.mu.Lock()
	for _, f := range files {
		group := byFile[f]
		k := refineKey(scope, f, group)
		if rs, ok := s.runs[k]; ok {
			for i, c := range group {
				c.raw, c.runs, c.places, c.ctx = rs[i].raw, rs[i].runs, rs[i].places, rs[i].ctx
			}
			continue
		}
		keys[f] = k
		todo = append(todo, group...)
	}
	s.mu.Unlock()
	return todo, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for f, k := range keys {
			group := byFile[f]
			rs := make([]refined, len(group))
			for i, c := range group {
				rs[i] = refined{raw: c.raw, runs: c.runs, places: c.places, ctx: c.ctx}
			}
			s.runs[k] = rs
		}
	}
}

// refineKey names the runs refine finds for the edits of one file rel
// (cands, in order) from the commits scope names: they are found from
// those alone.
func refineKey(scope, rel string, cands []*cand) string {
	var k strings.Builder
	k.WriteString(scope)
	k.WriteString("\x00")
	k.WriteString(rel)
	for _, c := range cands {
		k.WriteString("\x00")
		k.WriteString(c.e.MessageID)
		k.WriteString("\x01")
		k.WriteString(c.e.PartID)
		k.WriteString("\x01")
		k.WriteString(strconv.Itoa(c.e.N))
	}
	return k.String()
}
