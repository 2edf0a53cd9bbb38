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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
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
	// The repository's files tell the work tree and, for the blame that
	// follows, HEAD and the file's object in it, where they can for
	// certain (gitindex.ProbeFile: HEAD's tree is the index's, nothing
	// in git's environment or configuration moves them); else one git
	// process tells them, and where it cannot (no HEAD, a file git does
	// not track), the work tree alone.
	top, probe, probed := directProbe(abs)
	if !probed {
		top, probe, probed = topAndProbe(ctx, b.Git, filepath.Dir(abs), filepath.Base(abs))
	}
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
		g.gitDir = probe.gitDir
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
		head := at.head
		if rev != "" {
			// Blamed at a commit, not as the work tree has it: an answer
			// of its own.
			head = "at " + rev
		}
		key = answerKey(g, rel, head, at.blob, sd.version, b.UserID)
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
	cands, common, any, err := b.candidates(ctx, g, g.shared, sd.roots, sd.repo, rel, lines)
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
	if b.Cache != "" {
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
	} else if lines, at, ok, err := b.revAges(ctx, g, rel, rev, content); err != nil || ok {
		return lines, false, at, err
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
