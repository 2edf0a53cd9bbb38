// Package blame attributes the lines of a file in a git work tree to
// the agent sessions that wrote them: it matches the file's lines, as
// git blame dates them, to the edits of the store's edit index (package
// fileedit), and classifies each line as an agent's, mixed (a human
// changed an agent's line), a human's, or unknown — the contributor
// types of the Agent Trace specification, whose records it also writes
// and reads (trace.go). Git runs as a subprocess; nothing is written to
// the repository.
package blame

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
	"github.com/loomhq/loom/paths"
)

// Kinds of line (Line.Kind), the Agent Trace contributor types in
// loom's words.
const (
	Agent   = "agent"
	Mixed   = "mixed"
	Human   = "human"
	Unknown = "unknown"
)

// What an agent's line rests on when no edit's text holds it
// (Line.Evidence).
const (
	// EvidenceShell is a sed -i or perl -pi command of the agent's whose
	// substitution makes the line of the one before.
	EvidenceShell = "shell"
	// EvidenceProgram is a program the agent ran whose text names the
	// file as one it writes, in the line's window: what it wrote is not
	// known, so the line is the agent's with a lower confidence.
	EvidenceProgram = "program"
)

// Line is one line of a file with who wrote it. For an agent's line
// (and a mixed one: the agent's line a human changed) the edit that
// wrote it: its session, turn, agent, model, tool and time.
type Line struct {
	N      int    `json:"line"`
	Kind   string `json:"kind"`
	Commit string `json:"commit,omitempty"`
	// The edit, for an agent's line or a mixed one.
	SessionID string     `json:"session_id,omitempty"`
	MessageID string     `json:"message_id,omitempty"`
	PartID    string     `json:"part_id,omitempty"`
	Seq       int64      `json:"seq,omitempty"`
	Turn      int        `json:"turn,omitempty"`
	Agent     string     `json:"agent,omitempty"`
	Model     string     `json:"model,omitempty"`
	Provider  string     `json:"provider,omitempty"`
	Tool      string     `json:"tool,omitempty"`
	At        *time.Time `json:"at,omitempty"`
	// From is the file the edit wrote, when it is not this one (a line
	// moved or copied from it, or the file renamed since).
	From string `json:"from,omitempty"`
	// Source says where the attribution came from when not from loom's
	// sessions: "trace" for an Agent Trace record in the repository.
	Source string `json:"source,omitempty"`
	// Conversation is the URL of the conversation an Agent Trace record
	// of another tool names for the line.
	Conversation string `json:"conversation,omitempty"`
	// Evidence says, for an agent's line not put in by an edit whose
	// text holds it, what it rests on: EvidenceShell or EvidenceProgram.
	Evidence string `json:"evidence,omitempty"`
	// Member is the team member whose session wrote the line, when the
	// blame read a team's sessions (Sources): the session's own
	// (loom.Session.Member); one's own sessions are named by one's name
	// in the team (Sources.Me).
	Member string `json:"member,omitempty"`
	Text   string `json:"text"`
}

// Result is a file blamed.
type Result struct {
	// Repo is the work tree's top-level directory, Path the file in it.
	Repo string `json:"repo"`
	Path string `json:"path"`
	// Revision is the commit blamed, "" for the work tree's file.
	Revision string `json:"revision,omitempty"`
	Lines    []Line `json:"lines"`
	// Notes say what the user should know of the answer, one line
	// each: a shallow clone, no session for the file or the repository.
	Notes []string `json:"notes,omitempty"`
}

// Counts are how many lines a result has of each kind.
func (r *Result) Counts() map[string]int {
	c := map[string]int{}
	for _, l := range r.Lines {
		c[l.Kind]++
	}
	return c
}

// Blamer blames files against one user's sessions in a store.
type Blamer struct {
	Store loom.EditStore
	// Team, when the blame reads teams' sessions with one's own, is
	// the Sources that Store is: it indexes every store it reads. Nil
	// for one's own sessions alone.
	Team *Sources
	// Roots lists the roots the store's sessions recorded (a clone
	// elsewhere); nil looks only at the project's own roots.
	Roots loom.RootLister
	// Versions names the version of Store's edit index, under which
	// answers are kept; nil keeps none.
	Versions loom.EditVersioner
	UserID   string
	// Git is the git program ("git" when empty); Now the clock (the
	// time of the Agent Trace records it writes).
	Git string
	Now func() time.Time
	// Traces, when set, are Agent Trace records read besides the
	// sessions (ReadTraces); their attribution stands where loom's
	// sessions have none.
	Traces []Record
	// Cache is the directory of the line-age cache (ages.go), none
	// when empty: the ages git blame gave the lines of the work tree's
	// files, so that a file blamed again costs git the commits since.
	Cache string
	// Sessions reads the store's sessions (for git notes, the id each
	// agent gave its session); nil reads them through Store when it can.
	Sessions SessionReader
	// indexed is set once the edit index was brought up to date.
	indexed bool
	// found keeps, by work tree, where its sessions saw it (roots).
	found map[string]foundRoots
	ages  *ageCache
}

func (b *Blamer) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Open finds the file a user names: its work tree and its path in it.
func (b *Blamer) Open(ctx context.Context, path string) (Git, string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Git{}, "", err
	}
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Git{}, "", loom.Errorf(loom.ENOTFOUND, "%s: no such file", path)
	case err != nil:
		return Git{}, "", err
	case st.IsDir():
		return Git{}, "", loom.Errorf(loom.EINVALID, "%s is a directory: loom blame takes a file (loom blame summary takes a directory)", path)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	// One git process tells the work tree and, for the blame that
	// follows, HEAD and the file's object in it; where it cannot (no
	// HEAD, a file git does not track), the work tree alone.
	top, probe, probed := topAndProbe(ctx, b.Git, filepath.Dir(abs), filepath.Base(abs))
	if !probed {
		top, err = Toplevel(ctx, b.Git, filepath.Dir(abs))
		if err != nil {
			if loom.ErrorCode(err) == loom.EINVALID && !strings.Contains(err.Error(), "needs git") {
				return Git{}, "", loom.Errorf(loom.EINVALID, "%s is not in a git work tree: loom blame matches the lines of a repository's files", path)
			}
			return Git{}, "", err
		}
	}
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil {
		return Git{}, "", err
	}
	g := Git{Bin: b.Git, Dir: top}
	if probed {
		g.opened = &openedFile{rel: filepath.ToSlash(rel), p: probe}
	}
	return g, filepath.ToSlash(rel), nil
}

// binary says whether content looks like no text: a NUL byte in its
// first 8,000 bytes, as git decides.
func binary(content []byte) bool {
	return bytes.IndexByte(content[:min(len(content), 8000)], 0) >= 0
}

// File blames path: the work tree's file when rev is empty, else the
// file at commit rev.
func (b *Blamer) File(ctx context.Context, path, rev string) (*Result, error) {
	g, rel, err := b.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return b.Blame(ctx, g, rel, rev)
}

// Blame blames rel in g's work tree (at rev, or as the work tree has
// it).
func (b *Blamer) Blame(ctx context.Context, g Git, rel, rev string) (*Result, error) {
	res := &Result{Repo: g.Dir, Path: rel, Revision: rev}
	var content []byte
	var err error
	if rev == "" {
		content, err = os.ReadFile(filepath.Join(g.Dir, filepath.FromSlash(rel)))
	} else {
		content, err = g.Show(ctx, rev, rel)
	}
	if err != nil {
		return nil, err
	}
	if binary(content) {
		return nil, loom.Errorf(loom.EINVALID, "%s is a binary file: loom blame attributes lines of text", rel)
	}
	// The commits git notes are kept for are listed meanwhile (a process
	// of git's, whose start is much of a repeated blame's time).
	noted := make(chan map[string]string, 1)
	go func() { noted <- g.NotedCommits(ctx) }()
	// The store's side runs while git blames.
	side := make(chan storeSide, 1)
	var cache *ageCache
	if b.Cache != "" {
		cache = b.ageCache() // made before the two sides share it
	}
	go func() { side <- b.readStoreSide(ctx, g, rel, rev, cache) }()
	lines, shallow, at, err := b.lines(ctx, g, rel, rev, content)
	if err != nil {
		<-side
		return nil, err
	}
	if shallow {
		res.Notes = append(res.Notes, "this is a shallow clone: lines older than its first commit are unknown (git fetch --unshallow gives all of them)")
	}
	sd := <-side
	if sd.err != nil {
		return nil, sd.err
	}
	// The answer is kept when the work tree's file is HEAD's and the
	// store names its version.
	key := ""
	if sd.version != "" && at.clean && !shallow {
		key = answerKey(g, rel, at.head, at.blob, sd.version, b.UserID)
	}
	if sd.kept != nil {
		if kept := sd.kept.keptLines(lines); kept != nil && sd.kept.Key == key {
			res.Lines, res.Notes = kept, append(res.Notes, sd.kept.Notes...)
			cache.count(&cache.used.kept)
			return b.finish(ctx, g, rel, rev, res, lines, <-noted), nil
		}
		// Kept of another commit or content: the store's side now.
		if sd.roots, sd.repo, sd.elsewhere, sd.facts, err = b.repoEdits(ctx, g); err != nil {
			return nil, err
		}
	}
	cands, common, any, err := b.candidates(ctx, g.shared, sd.roots, sd.repo, rel, lines)
	if err != nil {
		return nil, err
	}
	switch {
	case !any && sd.elsewhere > 0:
		// Sessions of this repository ran elsewhere and none of their
		// edits could be matched here: no one can tell.
		res.Notes = []string{fmt.Sprintf("unknown: %d sessions of this repository were recorded elsewhere, and none of their edits could be matched to this clone's files", sd.elsewhere)}
	case !any:
		// Nothing to attribute: that is all there is to say.
		res.Notes = []string{}
		res.Notes = append(res.Notes, noSessionNote+g.Dir+": import the agents' sessions first (loom session import --from all)")
	case !slices.ContainsFunc(cands, func(c *cand) bool { return !c.foreign }):
		res.Notes = append(res.Notes, "no session loom holds changed "+rel+": its lines are a human's (or unknown)")
	}
	if err := refine(ctx, g, cands); err != nil {
		return nil, err
	}
	h := &history{ctx: ctx, g: g, rel: rel, rev: rev, common: common}
	res.Lines = attribute(lines, cands, shallow, h)
	if !any && sd.elsewhere > 0 {
		for i := range res.Lines {
			if res.Lines[i].Kind == Human {
				res.Lines[i].Kind = Unknown
			}
		}
	}
	if key != "" {
		facts := sd.facts
		facts.Trees = h.trees.asked
		e := &answerEntry{Key: key, Store: sd.version, User: b.UserID, Facts: facts, Notes: slices.Clone(res.Notes), Lines: make([]Line, len(res.Lines))}
		for i, l := range res.Lines {
			l.Text = ""
			e.Lines[i] = l
		}
		// A cache that cannot be written leaves the next blame to match
		// again: the answer stands.
		_ = b.ageCache().saveAnswer(g.Dir, rel, e)
	}
	return b.finish(ctx, g, rel, rev, res, lines, <-noted), nil
}

// storeSide is what the store tells of a file's blame: the index
// brought up to date, its version read and the answer kept under it
// looked up (answers.go), and, unless that still holds, the edits of
// the whole repository read.
type storeSide struct {
	roots     []string
	repo      []loom.FileEdit
	elsewhere int
	facts     rootFacts
	version   string
	kept      *answerEntry
	err       error
}

// readStoreSide reads the store's side of rel's blame (at rev, or as the
// work tree has it) through cache, when there is one.
func (b *Blamer) readStoreSide(ctx context.Context, g Git, rel, rev string, cache *ageCache) storeSide {
	var r storeSide
	if r.err = b.index(ctx); r.err != nil {
		return r
	}
	if rev == "" && b.Cache != "" {
		if r.version = b.editVersion(ctx); r.version != "" {
			if e := cache.loadAnswer(g.Dir, rel); e != nil && e.Store == r.version && e.User == b.UserID && b.rootsHold(ctx, g, e) {
				r.kept = e
				return r
			}
		}
	}
	r.roots, r.repo, r.elsewhere, r.facts, r.err = b.repoEdits(ctx, g)
	return r
}

// finish adds to res what is read from elsewhere than loom's sessions
// each time: Agent Trace records, git notes (noted: the commits they
// are kept for).
func (b *Blamer) finish(ctx context.Context, g Git, rel, rev string, res *Result, lines []blamed, noted map[string]string) *Result {
	if len(b.Traces) > 0 {
		applyTraces(ctx, g, rel, rev, res.Lines, b.Traces)
	}
	// Authorship logs of the Git AI standard (git notes, loom's own or
	// git-ai's) account for the lines of their commits nothing else
	// does.
	if len(noted) > 0 {
		commits := map[string]time.Time{}
		for i, l := range res.Lines {
			if _, ok := noted[l.Commit]; ok && l.SessionID == "" && l.Source == "" {
				commits[l.Commit] = lines[i].Time
			}
		}
		if recs := g.NoteRecords(ctx, noted, commits); len(recs) > 0 {
			applyNotes(lines, res.Lines, recs)
		}
	}
	if slices.ContainsFunc(res.Lines, func(l Line) bool { return l.Source != "" }) {
		// The agents' lines were read from the repository: it is not
		// sessions to import that the file lacks.
		res.Notes = slices.DeleteFunc(res.Notes, func(n string) bool { return strings.HasPrefix(n, noSessionNote) })
	}
	return res
}

// noSessionNote starts the note of a repository no session loom holds
// worked in.
const noSessionNote = "loom holds no session that changed a file in "

// ageCache is the Blamer's cache directory.
func (b *Blamer) ageCache() *ageCache {
	if b.ages == nil {
		b.ages = &ageCache{dir: b.Cache}
	}
	return b.ages
}

// lines are the lines of rel (content, at rev or in the work tree) with
// their ages, through the line-age cache when it can tell them, and
// whether the repository is a shallow clone.
func (b *Blamer) lines(ctx context.Context, g Git, rel, rev string, content []byte) ([]blamed, bool, headState, error) {
	if rev == "" {
		if lines, at, ok, err := b.workTreeAgesAt(ctx, g, rel, content); err != nil || ok {
			return lines, false, at, err
		}
	}
	var lines []blamed
	if rev == "" && (g.Head(ctx) == "" || !g.Tracked(ctx, rel)) {
		// A file git does not know: every line is not committed.
		for i, l := range fileedit.Lines(string(content)) {
			lines = append(lines, blamed{Commit: uncommitted, Path: rel, OrigLine: i + 1, Text: l, Time: notYet})
		}
	} else {
		var err error
		if lines, err = g.Blame(ctx, rev, rel); err != nil {
			return nil, false, headState{}, err
		}
	}
	return lines, g.Shallow(ctx), headState{}, nil
}

// index brings the store's edit index up to date, once per Blamer. A
// store open read-only blames with what is indexed already.
func (b *Blamer) index(ctx context.Context) error {
	if b.indexed {
		return nil
	}
	b.indexed = true
	if b.Team != nil {
		return b.Team.Index(ctx)
	}
	_, err := fileedit.Index(ctx, b.Store)
	if err != nil && loom.ErrorCode(err) == loom.EINVALID {
		return nil
	}
	return err
}

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
	var tracked map[string]bool
	for _, r := range recorded {
		if slices.Contains(roots, r.Root) || r.ProjectID == p.ID && p.ID != "" || !filepath.IsAbs(r.Root) {
			continue
		}
		if _, err := os.Stat(filepath.Join(r.Root, ".git")); err == nil {
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
		}
		es, err := b.Store.Edits(ctx, loom.EditQuery{UserID: b.UserID, Under: r.Root, Bare: true})
		if err != nil {
			continue
		}
		top, ok := matchRoot(es, tracked)
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
		parts := strings.Split(strings.TrimPrefix(e.Path, "/"), "/")
		for k := range parts {
			if tracked[strings.Join(parts[k:], "/")] {
				root := "/" + strings.Join(parts[:k], "/")
				if files[root] == nil {
					files[root] = map[string]bool{}
				}
				files[root][e.Path] = true
				break
			}
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
func (b *Blamer) candidates(ctx context.Context, sh *shared, roots []string, repo []loom.FileEdit, rel string, lines []blamed) (cands []*cand, common map[string]bool, any bool, err error) {
	if len(repo) == 0 {
		return nil, nil, false, nil
	}
	lineage := map[string]bool{rel: true}
	for _, l := range lines {
		lineage[l.Path] = true
	}
	// Moves an agent made bring the file's earlier name in, copies the
	// file copied (its edits up to the copy).
	copiedInto(roots, repo, lineage)
	want := wantedFiles(roots, repo, lineage, linePairs(lines))
	var filesOf map[uint64]map[string]bool
	if sh != nil {
		filesOf = sh.lineFiles(roots, repo)
	} else {
		filesOf = lineFiles(roots, repo)
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
		if lineage[r] {
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

// lineFiles are the files of the repository (seen at roots) each line
// hash of its edits was put in by, up to commonFiles of them.
func lineFiles(roots []string, repo []loom.FileEdit) map[uint64]map[string]bool {
	filesOf := map[uint64]map[string]bool{}
	for _, e := range repo {
		r, ok := relTo(roots, e.Path)
		if !ok || e.Op == loom.EditMove || e.Op == loom.EditDelete {
			continue
		}
		for _, h := range e.Lines {
			if h == 0 {
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
