package blame

import (
	"context"
	"slices"
	"strings"

	"github.com/loomhq/loom"
)

// emptyTree is git's tree of no file, which every repository knows.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// PR is what a pull request's lines say of who wrote them: the lines
// its commits added that the head still holds, by kind, agent, model
// and member, and the sessions behind them.
type PR struct {
	Repo string `json:"repo"`
	// Base is the merge base of the range's ends, Head its head; Range
	// the range as given (or the branch and its upstream).
	Base    string `json:"base"`
	Head    string `json:"head"`
	Range   string `json:"range"`
	Commits int    `json:"commits"`
	// Lines counts the added lines by kind; ByAgent, ByModel and
	// ByMember the agents' and mixed lines of each (Tally.Agent and
	// Tally.Mixed; a mixed line counts half in every share).
	Lines    Tally            `json:"lines"`
	ByAgent  map[string]Tally `json:"by_agent"`
	ByModel  map[string]Tally `json:"by_model"`
	ByMember map[string]Tally `json:"by_member,omitempty"`
	Files    []PRFile         `json:"files"`
	// Sessions are the sessions behind the agents' lines, most lines
	// first, with their cost (filled by whoever holds the sessions).
	Sessions []PRSession `json:"sessions"`
	// CostUSD is the cost of those sessions, whole: of those the store
	// holds, NotHeld counting the others, whose cost is not known.
	CostUSD float64 `json:"cost_usd"`
	NotHeld int     `json:"sessions_not_held,omitempty"`
	// Unpriced counts the sessions held whose model the price table
	// does not know: their tokens are counted, their cost is not known
	// (not a cost of nothing), and CostUSD leaves them out.
	Unpriced int      `json:"sessions_unpriced,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// PRFile is one file of a pull request and its added lines.
type PRFile struct {
	Path  string `json:"path"`
	Lines Tally  `json:"lines"`
}

// PRSession is a session behind a pull request's lines.
type PRSession struct {
	Sessions
	Title   string  `json:"title,omitempty"`
	CostUSD float64 `json:"cost_usd"`
	// Share is a share link of the session, when one was asked for.
	Share string `json:"share,omitempty"`
	// NotHeld says the session is not in the store: its lines were read
	// from the repository's git notes or Agent Trace records, its title
	// and cost are not known (CostUSD is 0).
	NotHeld bool `json:"not_held,omitempty"`
	// Unpriced says the session's model has no known price: its tokens
	// are counted and its cost is not known (CostUSD is 0), as loom
	// usage says of it.
	Unpriced bool `json:"unpriced,omitempty"`
}

// PullRequest blames the lines a range of commits added: spec is
// BASE..HEAD (BASE...HEAD alike), or "" for the branch against its
// upstream. Each file the range added or changed is blamed as the head
// has it, and its lines that a commit of the range brought in are
// counted.
func (b *Blamer) PullRequest(ctx context.Context, g Git, spec string) (*PR, error) {
	spec, head, tip, base, err := g.prRange(ctx, spec)
	if err != nil {
		return nil, err
	}
	revs, err := g.Revisions(ctx, tip+".."+head)
	if err != nil {
		return nil, err
	}
	inRange := map[string]bool{}
	for _, r := range revs {
		inRange[r] = true
	}
	pr := &PR{Repo: g.Dir, Base: base, Head: head, Range: spec, Commits: len(revs),
		ByAgent: map[string]Tally{}, ByModel: map[string]Tally{}, Files: []PRFile{}, Sessions: []PRSession{}}
	diff, err := g.run(ctx, "diff", "--name-only", "-M", "--diff-filter=AMR", "-z", base, head, "--")
	if err != nil {
		return nil, err
	}
	files := zPaths(diff)
	// The files' blames share what git and the store tell of the
	// repository, as a directory's summary's do, and git blames them on
	// every core beforehand.
	g.shared = newShared()
	defer g.shared.close()
	if base != emptyTree && !g.Shallow(ctx) {
		// Each file's lines older than the range are not counted: git
		// blames the range's commits alone (Git.since).
		g.since = base
	}
	b.blameAheadAt(ctx, g, files, head)
	results, errs := b.blameEach(ctx, g, files, head)
	ss := map[string]*Sessions{}
	notes := map[string]bool{}
	var failed []error
	blamed := 0
	for i, f := range files {
		res, err := results[i], errs[i]
		if err != nil {
			if loom.ErrorCode(err) == loom.EINVALID {
				continue // a binary file
			}
			if ctx.Err() != nil {
				return nil, err
			}
			// A file git cannot read (an object missing, damaged) is
			// said, and the others are counted.
			failed = append(failed, err)
			notes[f+" could not be blamed, its lines are not counted: "+err.Error()] = true
			continue
		}
		blamed++
		for _, n := range res.Notes {
			if !strings.HasPrefix(n, "no session loom holds changed") {
				notes[n] = true
			}
		}
		pr.addFile(f, res, inRange, ss)
	}
	if blamed == 0 && len(failed) > 0 {
		return nil, failed[0]
	}
	for _, s := range sortedSessions(ss) {
		pr.Sessions = append(pr.Sessions, PRSession{Sessions: s})
	}
	for n := range notes {
		pr.Notes = append(pr.Notes, n)
	}
	slices.Sort(pr.Notes)
	return pr, nil
}

// prRange reads a pull request's range: spec as given (BASE..HEAD,
// BASE...HEAD, or "" for the branch and its upstream, which rng then
// names), its head and the base's tip resolved to commits, and the
// base the lines are counted against: the merge base, or for a head
// with no history in common with the base (a new repository's first
// commits) nothing.
func (g Git) prRange(ctx context.Context, spec string) (rng, head, tip, base string, err error) {
	baseRef, headRef := "", "HEAD"
	switch {
	case spec == "":
		out, err := g.run(ctx, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
		if err != nil {
			return "", "", "", "", loom.Errorf(loom.EINVALID, "this branch has no upstream: give the range, as loom blame pr main..HEAD")
		}
		baseRef = strings.TrimSpace(string(out))
		spec = baseRef + "..HEAD"
	case strings.Contains(spec, "..."):
		baseRef, headRef, _ = strings.Cut(spec, "...")
	case strings.Contains(spec, ".."):
		baseRef, headRef, _ = strings.Cut(spec, "..")
	default:
		return "", "", "", "", loom.Errorf(loom.EINVALID, "%q is no range: give BASE..HEAD", spec)
	}
	if headRef == "" {
		headRef = "HEAD"
	}
	if head, err = g.commitOf(ctx, headRef); err != nil {
		return "", "", "", "", err
	}
	if tip, err = g.commitOf(ctx, baseRef); err != nil {
		return "", "", "", "", err
	}
	base = emptyTree
	if out, err := g.run(ctx, "merge-base", tip, head); err == nil {
		base = strings.TrimSpace(string(out))
	}
	return spec, head, tip, base, nil
}

// commitOf is the commit ref names.
func (g Git) commitOf(ctx context.Context, ref string) (string, error) {
	out, err := g.run(ctx, "rev-parse", "--verify", "-q", ref+"^{commit}")
	if err != nil {
		return "", loom.Errorf(loom.ENOTFOUND, "%s names no commit of %s", ref, g.Dir)
	}
	return strings.TrimSpace(string(out)), nil
}

// addFile counts the lines of file f's blame (res) that a commit of
// the range brought in (inRange), and the sessions behind them in ss.
func (pr *PR) addFile(f string, res *Result, inRange map[string]bool, ss map[string]*Sessions) {
	pf := PRFile{Path: f}
	for i := range res.Lines {
		l := &res.Lines[i]
		if !inRange[l.Commit] {
			continue
		}
		pf.Lines.Add(l.Kind)
		pr.Lines.Add(l.Kind)
		if l.SessionID == "" {
			continue
		}
		addSession(ss, f, l)
		pr.addAgentLine(l)
	}
	if pf.Lines.Total > 0 {
		pr.Files = append(pr.Files, pf)
	}
}

// addAgentLine counts a line of a session's by its agent, model and
// member.
func (pr *PR) addAgentLine(l *Line) {
	if l.Member != "" && pr.ByMember == nil {
		pr.ByMember = map[string]Tally{}
	}
	for _, m := range []struct {
		by  map[string]Tally
		key string
	}{{pr.ByAgent, l.Agent}, {pr.ByModel, l.Model}, {pr.ByMember, l.Member}} {
		if m.by == nil {
			// No member: the sessions read were one's own alone.
			continue
		}
		t := m.by[m.key]
		t.Add(l.Kind)
		m.by[m.key] = t
	}
}

// Share is the part of a pull request's added lines that t's lines
// make (mixed ones count half).
func (pr *PR) Share(t Tally) float64 {
	if pr.Lines.Total == 0 {
		return 0
	}
	return (float64(t.Agent) + float64(t.Mixed)/2) / float64(pr.Lines.Total)
}
