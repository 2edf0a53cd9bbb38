package blame

import (
	"cmp"
	"context"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// maxCommits bounds the commits one range is read for.
const maxCommits = 1000

// Commit is a commit with the sessions behind the lines it brought in.
type Commit struct {
	SHA     string    `json:"commit"`
	Subject string    `json:"subject"`
	At      time.Time `json:"committed_at"`
	// Lines counts the lines of text the commit brought in (and still
	// holds at that commit), by kind.
	Lines    Tally      `json:"lines"`
	Sessions []Sessions `json:"sessions"`
}

// Tally counts lines by kind.
type Tally struct {
	Total   int `json:"total"`
	Agent   int `json:"agent"`
	Mixed   int `json:"mixed"`
	Human   int `json:"human"`
	Unknown int `json:"unknown"`
}

// Add counts one line of kind.
func (t *Tally) Add(kind string) {
	t.Total++
	switch kind {
	case Agent:
		t.Agent++
	case Mixed:
		t.Mixed++
	case Unknown:
		t.Unknown++
	default:
		t.Human++
	}
}

// Share is the part of the lines an agent wrote (mixed ones count
// half): what git-ai shows per commit.
func (t Tally) Share() float64 {
	if t.Total == 0 {
		return 0
	}
	return (float64(t.Agent) + float64(t.Mixed)/2) / float64(t.Total)
}

// Sessions is one session's part in some lines: which turns, how many
// lines, in which files.
type Sessions struct {
	SessionID string   `json:"session_id"`
	Agent     string   `json:"agent"`
	Model     string   `json:"model"`
	Turns     []int    `json:"turns"`
	Lines     int      `json:"lines"`
	Mixed     int      `json:"mixed"`
	Files     []string `json:"files"`
	// Member is the team member whose session it is, when a team's
	// sessions were read ("" otherwise).
	Member string `json:"member,omitempty"`
}

// addSession counts line l (an agent's or mixed) of file in ss.
func addSession(ss map[string]*Sessions, file string, l *Line) {
	s := ss[l.SessionID]
	if s == nil {
		s = &Sessions{SessionID: l.SessionID, Agent: l.Agent, Model: l.Model, Member: l.Member}
		ss[l.SessionID] = s
	}
	if l.Kind == Mixed {
		s.Mixed++
	} else {
		s.Lines++
	}
	if l.Turn > 0 && !slices.Contains(s.Turns, l.Turn) {
		s.Turns = append(s.Turns, l.Turn)
	}
	if !slices.Contains(s.Files, file) {
		s.Files = append(s.Files, file)
	}
}

func sortedSessions(ss map[string]*Sessions) []Sessions {
	out := make([]Sessions, 0, len(ss))
	for _, s := range ss {
		slices.Sort(s.Turns)
		slices.Sort(s.Files)
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Sessions) int {
		return cmp.Or(cmp.Compare(b.Lines+b.Mixed, a.Lines+a.Mixed), cmp.Compare(a.SessionID, b.SessionID))
	})
	return out
}

// Tally counts r's lines by kind.
func (r *Result) Tally() Tally {
	var t Tally
	for _, l := range r.Lines {
		t.Add(l.Kind)
	}
	return t
}

// Sessions are the sessions behind r's lines, most lines first.
func (r *Result) Sessions() []Sessions {
	ss := map[string]*Sessions{}
	for i := range r.Lines {
		if l := &r.Lines[i]; l.SessionID != "" {
			addSession(ss, r.Path, l)
		}
	}
	return sortedSessions(ss)
}

// Revisions are the commits spec names, oldest first: one commit, or a
// range A..B (at most maxCommits).
func (g Git) Revisions(ctx context.Context, spec string) ([]string, error) {
	if spec == "" {
		spec = "HEAD"
	}
	if !strings.Contains(spec, "..") {
		out, err := g.run(ctx, "rev-parse", "--verify", "-q", spec+"^{commit}")
		if err != nil {
			return nil, loom.Errorf(loom.ENOTFOUND, "%s names no commit of %s", spec, g.Dir)
		}
		return []string{strings.TrimSpace(string(out))}, nil
	}
	out, err := g.run(ctx, "rev-list", "--reverse", "--max-count="+strconv.Itoa(maxCommits+1), spec)
	if err != nil {
		return nil, loom.Errorf(loom.EINVALID, "%s is no range of commits of %s: %v", spec, g.Dir, err)
	}
	revs := strings.Fields(string(out))
	if len(revs) > maxCommits {
		return nil, loom.Errorf(loom.EINVALID, "%s holds more than %d commits: take a shorter range", spec, maxCommits)
	}
	return revs, nil
}

// changed are the text files commit rev added or modified.
func (g Git) changed(ctx context.Context, rev string) ([]string, error) {
	out, err := g.run(ctx, "diff-tree", "-r", "--no-commit-id", "--root", "-M", "--name-only", "--diff-filter=AMR", "-z", rev)
	if err != nil {
		return nil, err
	}
	files := zPaths(out)
	return files, nil
}

// Commits are the commits spec names with the sessions behind the lines
// each brought in, as each commit has them.
func (b *Blamer) Commits(ctx context.Context, g Git, spec string) ([]Commit, error) {
	revs, err := g.Revisions(ctx, spec)
	if err != nil {
		return nil, err
	}
	var out []Commit
	for _, rev := range revs {
		c := Commit{SHA: rev, Sessions: []Sessions{}}
		if info, err := g.run(ctx, "show", "-s", "--format=%ct%x00%s", rev); err == nil {
			sec, subj, _ := strings.Cut(strings.TrimSpace(string(info)), "\x00")
			n, _ := strconv.ParseInt(sec, 10, 64)
			c.At, c.Subject = time.Unix(n, 0).UTC(), subj
		}
		files, err := g.changed(ctx, rev)
		if err != nil {
			return nil, err
		}
		results, err := b.blameAll(ctx, g, files, rev)
		if err != nil {
			return nil, err
		}
		ss := map[string]*Sessions{}
		for _, res := range results {
			for i := range res.Lines {
				l := &res.Lines[i]
				if l.Commit != rev {
					continue
				}
				c.Lines.Add(l.Kind)
				if l.SessionID != "" {
					addSession(ss, res.Path, l)
				}
			}
		}
		c.Sessions = sortedSessions(ss)
		out = append(out, c)
	}
	return out, nil
}

// Share is the part of the summary's lines that n lines of an agent or a
// model, mixed of them, make: mixed lines count half, as in the total.
func (s *Summary) Share(n, mixed int) float64 {
	if s.Lines.Total == 0 {
		return 0
	}
	return (float64(n) - float64(mixed)/2) / float64(s.Lines.Total)
}

// Summary is the share of lines agents wrote in the files under a
// directory, in all and by directory, agent and model.
type Summary struct {
	Repo  string           `json:"repo"`
	Path  string           `json:"path"`
	Files int              `json:"files"`
	Lines Tally            `json:"lines"`
	ByDir map[string]Tally `json:"by_directory"`
	// ByAgent and ByModel count the lines of each agent and model,
	// mixed ones included; MixedByAgent and MixedByModel the mixed ones
	// among them, which every share counts half, as Lines.Share does.
	ByAgent      map[string]int `json:"by_agent"`
	ByModel      map[string]int `json:"by_model"`
	MixedByAgent map[string]int `json:"mixed_by_agent"`
	MixedByModel map[string]int `json:"mixed_by_model"`
	// Sessions are the sessions behind the lines, most lines first.
	Sessions []Sessions `json:"sessions"`
	// Skipped are the files left out: binary ones.
	Skipped []string `json:"skipped,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// filesUnder are the files git tracks under dir (relative to the top
// level; "" for all), in the index's order: git ls-files -z -- dir,
// read from the index file where it can be (dir a plain path, no
// pattern of git's).
func (g Git) filesUnder(ctx context.Context, dir string) ([]string, error) {
	if (dir == "" || path.Clean(dir) == strings.TrimSuffix(dir, "/") && !strings.HasPrefix(dir, "..") && !path.IsAbs(dir)) && !strings.ContainsAny(dir, "*?[\\:") && (g.Bin == "" || g.Bin == "git") {
		if ps, ok := g.indexPaths(); ok {
			d := strings.TrimSuffix(dir, "/")
			var out []string
			for _, p := range ps {
				if d == "" || d == "." || p == d || strings.HasPrefix(p, d+"/") {
					out = append(out, p)
				}
			}
			return out, nil
		}
	}
	args := []string{"ls-files", "-z", "--"}
	if dir != "" {
		args = append(args, dir)
	}
	out, err := g.run(ctx, args...)
	if err != nil {
		return nil, err
	}
	return zPaths(out), nil
}

// Summarize blames every file git tracks under dir (relative to the
// top level; "" for all of them), as the work tree has them.
func (b *Blamer) Summarize(ctx context.Context, g Git, dir string) (*Summary, error) {
	files, err := g.filesUnder(ctx, dir)
	if err != nil {
		return nil, err
	}
	s := newSummary(g, dir)
	ss := map[string]*Sessions{}
	notes := map[string]bool{}
	// The files' blames share what git and the store tell of the
	// repository, and git blames them on every core beforehand.
	g.shared = newShared()
	defer g.shared.close()
	g.shared.probeAll(ctx, g, dir)
	if g.gitDir == "" {
		g.gitDir = g.shared.gitDir
	}
	if b.Cache != "" {
		// The files' cache entries are read and written as one
		// file, the directory's pack.
		c := b.ageCache()
		c.beginPack(g.Dir, dir)
		defer c.endPack(files)
	}
	b.blameAhead(ctx, g, files)
	results, errs := b.blameEach(ctx, g, files, "")
	for i, f := range files {
		if err := errs[i]; err != nil {
			if loom.ErrorCode(err) == loom.EINVALID || loom.ErrorCode(err) == loom.ENOTFOUND {
				s.Skipped = append(s.Skipped, f)
				continue
			}
			return nil, err
		}
		s.add(ss, notes, f, results[i])
	}
	s.finish(ss, notes)
	return s, nil
}

// newSummary is an empty summary of dir in g's work tree.
func newSummary(g Git, dir string) *Summary {
	return &Summary{Repo: g.Dir, Path: dir, ByDir: map[string]Tally{}, ByAgent: map[string]int{}, ByModel: map[string]int{},
		MixedByAgent: map[string]int{}, MixedByModel: map[string]int{}, Sessions: []Sessions{}}
}

// add counts file f's blame res in s (its sessions in ss, its notes in
// notes).
func (s *Summary) add(ss map[string]*Sessions, notes map[string]bool, f string, res *Result) {
	for _, n := range res.Notes {
		if !strings.HasPrefix(n, "no session loom holds changed") {
			notes[n] = true
		}
	}
	s.Files++
	d := path.Dir(f)
	t := s.ByDir[d]
	for i := range res.Lines {
		l := &res.Lines[i]
		s.Lines.Add(l.Kind)
		t.Add(l.Kind)
		if l.SessionID != "" {
			addSession(ss, f, l)
			s.ByAgent[l.Agent]++
			s.ByModel[l.Model]++
			if l.Kind == Mixed {
				s.MixedByAgent[l.Agent]++
				s.MixedByModel[l.Model]++
			}
		}
	}
	s.ByDir[d] = t
}

// finish gives s its sessions and notes, once every file is counted.
func (s *Summary) finish(ss map[string]*Sessions, notes map[string]bool) {
	for n := range notes {
		s.Notes = append(s.Notes, n)
	}
	slices.Sort(s.Notes)
	s.Sessions = sortedSessions(ss)
}

// Export is the Agent Trace records of spec, written by loom version:
// for one commit, every file git tracks there that an agent wrote lines
// of; for a range, a record per commit with the files it changed.
func (b *Blamer) Export(ctx context.Context, g Git, spec, version string) ([]Record, error) {
	revs, err := g.Revisions(ctx, spec)
	if err != nil {
		return nil, err
	}
	var recs []Record
	for _, rev := range revs {
		var files []string
		if len(revs) == 1 && !strings.Contains(spec, "..") {
			out, err := g.run(ctx, "ls-tree", "-r", "-z", "--name-only", rev)
			if err != nil {
				return nil, err
			}
			files = zPaths(out)
		} else if files, err = g.changed(ctx, rev); err != nil {
			return nil, err
		}
		all, err := b.blameAll(ctx, g, files, rev)
		if err != nil {
			return nil, err
		}
		var results []*Result
		for _, res := range all {
			if c := res.Counts(); c[Agent]+c[Mixed] > 0 {
				results = append(results, res)
			}
		}
		recs = append(recs, NewRecord(rev, version, results, b.now()))
	}
	return recs, nil
}

// blameAll blames files at rev, binary ones left out.
func (b *Blamer) blameAll(ctx context.Context, g Git, files []string, rev string) ([]*Result, error) {
	var out []*Result
	for _, f := range files {
		res, err := b.Blame(ctx, g, f, rev)
		if err != nil {
			if loom.ErrorCode(err) == loom.EINVALID {
				continue // a binary file
			}
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}
