package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/fileedit"
	"github.com/loomhq/loom/htmlview"
	"github.com/loomhq/loom/internal/human"
)

// The blame page and GET /api/v1/blame: a file of a git work tree with
// the session that wrote each of its lines (package blame's answer, as
// loom blame gives it). They read files of the machine the server runs
// on, so they are offered to its owner alone (BlameConfig.Owner), and
// only for files under the roots of projects the owner's sessions
// worked in: the server's other users' tokens, and paths anywhere else,
// are refused before anything is read or git is run.

// BlameConfig offers the blame page (/blame) and GET /api/v1/blame.
type BlameConfig struct {
	// Owner is the user whose files the machine's are: the user loom
	// serve runs as. Only their tokens blame; another user's are
	// refused (403), as /mcp never offers them the blame tool.
	Owner string
	// Cache is the directory of the line-age cache (package blame's
	// Blamer.Cache), none when empty: a file viewed again costs git
	// only the commits since, as loom blame's does.
	Cache string
}

const (
	// maxBlameBytes bounds the file the server blames: the page shows
	// every line.
	maxBlameBytes = 2 << 20
	// maxBlamePrompts bounds the turns whose prompt the page reads to
	// show beside their lines.
	maxBlamePrompts = 40
)

// blameAPI answers GET /api/v1/blame?path=…&rev=…&lines=…: the file's
// lines with who wrote each, as loom blame --json prints them.
func (s *Server) blameAPI(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	lines, ok := blame.ParseLines(q.str("lines"))
	if !ok {
		q.fail("lines must be a line (12) or a range of lines (10-40)")
	}
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	res, err := s.blameFile(r.Context(), userOf(r), q.str("path"), q.str("rev"))
	if err == nil {
		err = res.Keep(lines)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// blameData is the blame page.
type blameData struct {
	Path, Rev string
	// Error is why the file was not blamed.
	Error string
	// Roots are the roots of the projects of the user's recent
	// sessions: where files can be blamed.
	Roots []string
	Res   *blame.Result
	Tally blame.Tally
	// Share is the part of the lines agents wrote, mixed ones counting
	// half.
	Share  string
	Kinds  mix
	Agents mix
	// Sessions are the sessions behind the lines, most lines first.
	Sessions []blameSession
	Ranges   []blameRange
}

// blameRange is a run of lines of one origin: an agent's turn (or the
// same turn's lines a human changed since), or a human's or unknown
// lines.
type blameRange struct {
	From, To int
	Kind     string
	// Who is the agent and model, or the contributor of an Agent Trace
	// record; Commit the commit of the range's lines when they share
	// one.
	Who, Commit string
	// SessionID, Title, Turn and Href name the session that wrote the
	// lines, linked to its page at the message of the edit; Prompt is
	// the turn's prompt (the page shows its start).
	SessionID, Title string
	Turn             int
	Href, Prompt     string
	Trace            bool
	Lines            []blame.Line
}

// blameSession is a session behind some of the file's lines.
type blameSession struct {
	blame.Sessions
	Title, Href string
}

func (s *Server) blamePage(w http.ResponseWriter, r *http.Request) {
	ctx, user := r.Context(), userOf(r)
	q := newQuery(r)
	d := blameData{Path: q.str("path"), Rev: q.str("rev")}
	if !s.blameFor(user) {
		s.pageErr(w, r, codedError(eForbidden, notOwner))
		return
	}
	title := "Blame"
	if d.Path == "" {
		projects, _, err := s.choices(ctx, user)
		if err != nil {
			s.pageErr(w, r, err)
			return
		}
		for _, p := range projects {
			if p.Root != "" && !slices.Contains(d.Roots, p.Root) {
				d.Roots = append(d.Roots, p.Root)
			}
		}
		slices.Sort(d.Roots)
		s.render(w, r, http.StatusOK, "blame", layoutData{Title: title, Nav: "blame", Body: d})
		return
	}
	res, err := s.blameFile(ctx, user, d.Path, d.Rev)
	if err != nil {
		// What the user can fix is said beside the form that asked.
		err = s.timedOut(r, err)
		if c := loom.ErrorCode(err); c == loom.EINVALID || c == loom.ENOTFOUND || c == eForbidden {
			d.Error = loom.ErrorMessage(err)
			s.render(w, r, statusOf(c), "blame", layoutData{Title: title, Nav: "blame", Body: d})
			return
		}
		s.pageErr(w, r, err)
		return
	}
	d.Res, d.Tally = res, res.Tally()
	d.Share = human.Percent(d.Tally.Share())
	d.Kinds = kindMix(d.Tally)
	if err := s.blameSessions(ctx, user, &d); err != nil {
		s.pageErr(w, r, err)
		return
	}
	title = filepath.Base(res.Path) + " · Blame"
	s.render(w, r, http.StatusOK, "blame", layoutData{Title: title, Nav: "blame", Body: d})
}

// blameSessions fills in the sessions behind d's lines, the share of
// each agent, and the ranges, each linked to its session at the turn.
// The titles and prompts are stored text, read through the secrets
// gate as the ways out of the machine read them.
func (s *Server) blameSessions(ctx context.Context, user string, d *blameData) error {
	gate := s.exportGate()
	owned := map[string]*loom.Session{}
	// own is the session id names when it is user's, else nil.
	own := func(id string) *loom.Session {
		x, ok := owned[id]
		if !ok {
			if x, _ = gate.Session(ctx, id); x != nil && x.UserID != user {
				x = nil
			}
			owned[id] = x
		}
		return x
	}
	byAgent := map[string]int{}
	for _, x := range d.Res.Sessions() {
		byAgent[x.Agent] += x.Lines + x.Mixed
		bs := blameSession{Sessions: x}
		if sx := own(x.SessionID); sx != nil {
			bs.Title, bs.Href = htmlview.SessionName(sx), "/s/"+x.SessionID
		}
		d.Sessions = append(d.Sessions, bs)
	}
	d.Agents = agentMix(byAgent, d.Tally.Total)
	type turnKey struct {
		id   string
		turn int
	}
	prompts := map[turnKey]string{}
	for _, rg := range lineRanges(d.Res.Lines) {
		l := rg.Lines[0]
		if l.SessionID == "" {
			d.Ranges = append(d.Ranges, rg)
			continue
		}
		if sx := own(l.SessionID); sx != nil {
			rg.Title, rg.Href = htmlview.SessionName(sx), messageHref(sx, l.Seq)
			k := turnKey{l.SessionID, l.Turn}
			p, ok := prompts[k]
			if !ok && len(prompts) < maxBlamePrompts && l.Source == "" {
				x, err := blame.ExcerptOf(ctx, gate, l)
				if err != nil && loom.ErrorCode(err) == loom.EINTERNAL {
					return err
				}
				if x != nil {
					p = x.Prompt
				}
				prompts[k] = p
			}
			rg.Prompt = p
		}
		d.Ranges = append(d.Ranges, rg)
	}
	return nil
}

// messageHref links to message seq of session x on its page: the
// newest page when it shows it, else the page of older messages that
// has it in its middle.
func messageHref(x *loom.Session, seq int64) string {
	h := "/s/" + url.PathEscape(x.ID)
	if seq < 1 {
		return h
	}
	if int64(x.MessageCount)-seq >= pageMessages {
		h += "?before=" + strconv.FormatInt(seq+pageMessages/2, 10)
	}
	return h + "#m-" + strconv.FormatInt(seq, 10)
}

// lineRanges groups lines into runs of one origin: the same kind, and
// for an agent's or mixed line the same session and turn (or, for an
// Agent Trace record's, the same contributor).
func lineRanges(lines []blame.Line) []blameRange {
	var out []blameRange
	// same says whether a and b are of one origin.
	same := func(a, b blame.Line) bool {
		return a.Kind == b.Kind && a.SessionID == b.SessionID && a.Turn == b.Turn && a.Source == b.Source && a.Agent == b.Agent && a.Model == b.Model
	}
	for i, l := range lines {
		if n := len(out); n > 0 && same(lines[i-1], l) && out[n-1].To == l.N-1 {
			rg := &out[n-1]
			rg.To = l.N
			rg.Lines = append(rg.Lines, l)
			if rg.Commit != l.Commit {
				rg.Commit = ""
			}
			continue
		}
		rg := blameRange{From: l.N, To: l.N, Kind: l.Kind, Commit: l.Commit, SessionID: l.SessionID, Turn: l.Turn,
			Trace: l.Source != "", Lines: []blame.Line{l}}
		if l.Agent != "" || l.Model != "" {
			rg.Who = strings.Trim(l.Agent+" · "+l.Model, " ·")
		}
		out = append(out, rg)
	}
	return out
}

// kindMix is the share bar of the lines by kind.
func kindMix(t blame.Tally) mix {
	m := mix{ID: "blame-kinds", Title: "Lines by who wrote them"}
	var x float64
	for _, k := range []struct {
		name string
		n    int
	}{{blame.Agent, t.Agent}, {blame.Mixed, t.Mixed}, {blame.Human, t.Human}, {blame.Unknown, t.Unknown}} {
		if k.n == 0 || t.Total == 0 {
			continue
		}
		f := float64(k.n) / float64(t.Total)
		m.Parts = append(m.Parts, mixPart{Name: k.name, Class: "k-" + k.name, X: x, Percent: f * 100,
			Label: fmt.Sprintf("%s: %s (%s)", k.name, human.Plural(k.n, "line"), human.Percent(f))})
		x += f * 100
	}
	return m
}

// agentMix is the share bar of the lines by the agent that wrote them
// (mixed ones included), of total lines.
func agentMix(byAgent map[string]int, total int) mix {
	m := mix{ID: "blame-agents", Title: "Lines by agent"}
	names := make([]string, 0, len(byAgent))
	for a := range byAgent {
		names = append(names, a)
	}
	slices.SortFunc(names, func(a, b string) int {
		if byAgent[a] != byAgent[b] {
			return byAgent[b] - byAgent[a]
		}
		return strings.Compare(a, b)
	})
	var x float64
	rest := 0
	for i, a := range names {
		if i >= usageSeries {
			rest += byAgent[a]
			continue
		}
		f := float64(byAgent[a]) / float64(max(total, 1))
		name := a
		if name == "" {
			name = "(unknown agent)"
		}
		m.Parts = append(m.Parts, mixPart{Name: name, Class: fmt.Sprintf("s%d", i), X: x, Percent: f * 100,
			Label: fmt.Sprintf("%s: %s (%s)", name, human.Plural(byAgent[a], "line"), human.Percent(f))})
		x += f * 100
	}
	if rest > 0 {
		f := float64(rest) / float64(max(total, 1))
		m.Parts = append(m.Parts, mixPart{Name: "other", Class: "s-other", X: x, Percent: f * 100,
			Label: fmt.Sprintf("other: %s (%s)", human.Plural(rest, "line"), human.Percent(f))})
	}
	return m
}

// maxEditedFiles bounds the files a session page links to their blame.
const maxEditedFiles = 50

// editedFile is a file that an edit of a turn wrote, linked to its
// blame.
type editedFile struct {
	Turn       int
	Name, Href string
}

// editedFiles are the files the edits of msgs (a session page's
// messages) wrote or changed that are still files here, by turn, named
// within the session's project: the session page links each to its
// blame, for its owner.
func editedFiles(x *loom.Session, msgs []*loom.Message) []editedFile {
	var out []editedFile
	seen := map[string]bool{}
	for _, m := range msgs {
		for _, c := range fileedit.Extract(m.Parts, x.Cwd) {
			k := fmt.Sprintf("%d\x00%s", m.Turn, c.Path)
			if (c.Op != loom.EditWrite && c.Op != loom.EditChange) || !filepath.IsAbs(c.Path) || seen[k] || len(out) == maxEditedFiles {
				continue
			}
			seen[k] = true
			if fi, err := os.Stat(c.Path); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			name := c.Path
			if rel, err := filepath.Rel(x.Project.Root, c.Path); x.Project.Root != "" && err == nil && filepath.IsLocal(rel) {
				name = rel
			}
			out = append(out, editedFile{Turn: m.Turn, Name: name, Href: "/blame?" + url.Values{"path": {c.Path}}.Encode()})
		}
	}
	return out
}
