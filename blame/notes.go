package blame

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// The Git AI standard (github.com/git-ai-project/git-ai,
// specs/git_ai_standard_v3.0.0.md): an authorship log attached to each
// commit as a git note under NotesRef, the lines of the commit's files
// that AI sessions wrote (an attestation section), then "---", then a
// JSON object of the sessions (metadata).
const (
	NotesRef         = "refs/notes/ai"
	AuthorshipSchema = "authorship/3.0.0"
)

// gitAITools are the tool names of the standard for the agents loom
// names otherwise.
var gitAITools = map[string]string{"claude-code": "claude", "gemini": "gemini", "codex": "codex", "cursor": "cursor", "copilot": "copilot"}

func hexOf(s string, n int) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:n]
}

// The custom attributes loom keeps in a session record, to read its
// own notes back as they were: what the standard has no field for.
const (
	attrSession  = "loom_session_id"
	attrAgent    = "loom_agent"
	attrProvider = "loom_provider"
	// attrTraces lists the session's trace keys of the note: t_…=turn,
	// with ":mixed" for the lines a human changed since.
	attrTraces = "loom_traces"
)

// NewAuthorship is the authorship log of commit rev: the lines of
// files (blamed at rev) that rev brought in and an agent's session
// wrote, mixed ones too (marked in loom's attributes). As git-ai writes
// one, base_commit_sha is rev itself, git_ai_version the writer's
// version ("loom" and loom's version), and each session is named by
// the id its agent gave it (agentID: Claude Code's, Codex's own id of
// the conversation; loom's id when it has none), so that git-ai's key
// of the same conversation (s_ and the first 14 hex digits of the
// SHA-256 of "tool:id") is loom's too. loom's own id is kept in the
// session's custom attributes.
func NewAuthorship(rev, version string, files []*Result, agentID func(sessionID string) string) *Authorship {
	a := &Authorship{Meta: AuthorshipMeta{SchemaVersion: AuthorshipSchema, GitAIVersion: strings.TrimSpace("loom " + version), BaseCommitSHA: rev,
		Prompts: map[string]PromptRecord{}, Sessions: map[string]SessionRecord{}}}
	if agentID == nil {
		agentID = func(id string) string { return id }
	}
	traces := map[string]map[string]string{} // session key → trace key → turn[:mixed]
	for _, f := range files {
		af := AttestedFile{Path: f.Path}
		byKey := map[string][]int{}
		var order []string
		for _, l := range f.Lines {
			if l.Commit != rev || l.SessionID == "" || l.Source != "" || l.Kind != Agent && l.Kind != Mixed {
				continue
			}
			tool := gitAITools[l.Agent]
			if tool == "" {
				tool = l.Agent
			}
			own := agentID(l.SessionID)
			sk := "s_" + hexOf(tool+":"+own, 14)
			if _, ok := a.Meta.Sessions[sk]; !ok {
				a.Meta.Sessions[sk] = SessionRecord{AgentID: AgentID{Tool: tool, ID: own, Model: l.Model},
					CustomAttributes: map[string]string{attrSession: l.SessionID, attrAgent: l.Agent, attrProvider: l.Provider}}
				traces[sk] = map[string]string{}
			}
			turn := strconv.Itoa(l.Turn)
			if l.Kind == Mixed {
				turn += ":mixed"
			}
			tk := "t_" + hexOf(l.SessionID+":"+turn, 14)
			traces[sk][tk] = turn
			key := sk + "::" + tk
			if byKey[key] == nil {
				order = append(order, key)
			}
			byKey[key] = append(byKey[key], l.N)
		}
		for _, k := range order {
			af.Entries = append(af.Entries, Attestation{Key: k, Lines: byKey[k]})
		}
		if len(af.Entries) > 0 {
			a.Files = append(a.Files, af)
		}
	}
	for sk, ts := range traces {
		var parts []string
		for _, tk := range slices.Sorted(mapsKeys(ts)) {
			parts = append(parts, tk+"="+ts[tk])
		}
		a.Meta.Sessions[sk].CustomAttributes[attrTraces] = strings.Join(parts, ",")
	}
	return a
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Record is the log as an Agent Trace record of commit rev at time at,
// for the lines it names to be read like a trace's (Line.Source
// "notes"): each session's lines its model's, a known human's the
// human's, and loom's own sessions as they were written.
func (a *Authorship) Record(rev string, at time.Time) Record {
	rec := Record{Version: TraceVersion, ID: "notes:" + rev, Timestamp: at.UTC().Format("2006-01-02T15:04:05.000Z"),
		VCS: &TraceVCS{Type: "git", Revision: rev}, Tool: &TraceTool{Name: "git-ai"}, source: "notes"}
	origins := map[string]traceOrigin{}
	for _, f := range a.Files {
		tf := TracedFile{Path: f.Path}
		for _, e := range f.Entries {
			conv := TraceConversation{}
			sk, tk, _ := strings.Cut(e.Key, "::")
			var agent AgentID
			var attrs map[string]string
			switch {
			case strings.HasPrefix(sk, "s_"):
				s, ok := a.Meta.Sessions[sk]
				if !ok {
					continue
				}
				agent, attrs = s.AgentID, s.CustomAttributes
			case strings.HasPrefix(sk, "h_"):
				conv.Contributor = &TraceContributor{Type: "human"}
			default:
				p, ok := a.Meta.Prompts[sk]
				if !ok {
					continue
				}
				agent, attrs = p.AgentID, p.Custom
			}
			if conv.Contributor == nil {
				conv.Contributor = &TraceContributor{Type: "ai", ModelID: agent.Model}
				conv.URL = "git-ai://" + agent.Tool + "/" + agent.ID
				if id := attrs[attrSession]; id != "" {
					// A note loom wrote: its session as it was.
					turnKind := traceTurn(attrs[attrTraces], tk)
					turn, kind, _ := strings.Cut(turnKind, ":")
					n, _ := strconv.Atoi(turn)
					conv.URL = SessionURL(id, n)
					conv.Contributor.ModelID = ModelID(attrs[attrProvider], agent.Model)
					if kind == "mixed" {
						conv.Contributor.Type = "mixed"
					}
					origins[conv.URL] = traceOrigin{SessionID: id, Turn: n, Agent: attrs[attrAgent], Model: agent.Model, Provider: attrs[attrProvider]}
				}
			}
			for _, n := range e.Lines {
				rs := conv.Ranges
				if k := len(rs); k > 0 && rs[k-1].EndLine == n-1 {
					rs[k-1].EndLine = n
				} else {
					rs = append(rs, TraceRange{StartLine: n, EndLine: n})
				}
				conv.Ranges = rs
			}
			tf.Conversations = append(tf.Conversations, conv)
		}
		rec.Files = append(rec.Files, tf)
	}
	if len(origins) > 0 {
		rec.Metadata = map[string]any{"dev.loom": map[string]any{"conversations": origins}}
	}
	return rec
}

// traceTurn is the turn[:kind] of trace key tk in a loom_traces list.
func traceTurn(list, tk string) string {
	for _, p := range strings.Split(list, ",") {
		if k, v, ok := strings.Cut(p, "="); ok && k == tk {
			return v
		}
	}
	return ""
}

// NotedCommits are the commits of the repository that have an
// authorship log, by commit: the note's blob.
func (g Git) NotedCommits(ctx context.Context) map[string]string {
	if g.shared != nil {
		return g.shared.notedCommits(ctx, g)
	}
	return g.notedCommits(ctx)
}

// notedCommits is NotedCommits, asked of git.
func (g Git) notedCommits(ctx context.Context) map[string]string {
	if g.gitDir != "" && !mayHaveRef(g.gitDir, NotesRef) {
		// No notes: no git process to say so (a fifth of a short
		// file's blame's git time).
		return nil
	}
	out, err := g.run(ctx, "notes", "--ref="+NotesRef, "list")
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			m[f[1]] = f[0]
		}
	}
	return m
}

// NoteRecords are the authorship logs of commits (those of them that
// noted has), as records (Authorship.Record); a log that does not read
// is left out.
func (g Git) NoteRecords(ctx context.Context, noted map[string]string, commits map[string]time.Time) []Record {
	var out []Record
	for c, at := range commits {
		blob, ok := noted[c]
		if !ok {
			continue
		}
		text, err := g.run(ctx, "cat-file", "blob", blob)
		if err != nil {
			continue
		}
		a, err := ParseAuthorship(string(text))
		if err != nil {
			continue
		}
		out = append(out, a.Record(c, at))
	}
	return out
}

// WriteNote attaches a's log to commit rev (replacing one it had).
func (g Git) WriteNote(ctx context.Context, rev string, a *Authorship) error {
	bin := g.Bin
	if bin == "" {
		bin = "git"
	}
	cmd := exec.CommandContext(ctx, bin, "notes", "--ref="+NotesRef, "add", "-f", "-F", "-", rev)
	cmd.Dir = g.Dir
	cmd.Stdin = strings.NewReader(a.String())
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git notes: %s", strings.TrimSpace(errb.String()))
	}
	return nil
}

// AllCommits is the spec of Notes for every commit of HEAD's history.
const AllCommits = "\x00all"

// Notes writes the authorship log of each commit spec names (HEAD by
// default) that agents' sessions wrote lines of, and returns how many
// it wrote.
func (b *Blamer) Notes(ctx context.Context, g Git, spec, version string) (int, error) {
	var revs []string
	var err error
	if spec == AllCommits {
		revs, err = g.Revisions(ctx, "HEAD")
		if err == nil {
			var out []byte
			out, err = g.run(ctx, "rev-list", "--reverse", "--max-count="+strconv.Itoa(maxCommits+1), "HEAD")
			revs = strings.Fields(string(out))
			if len(revs) > maxCommits {
				return 0, loom.Errorf(loom.EINVALID, "HEAD has more than %d commits: give a range", maxCommits)
			}
		}
	} else {
		revs, err = g.Revisions(ctx, spec)
	}
	if err != nil {
		return 0, err
	}
	n := 0
	ids := &agentIDs{ctx: ctx, b: b, ids: map[string]string{}}
	for _, rev := range revs {
		files, err := g.changed(ctx, rev)
		if err != nil {
			return n, err
		}
		results, err := b.blameAll(ctx, g, files, rev)
		if err != nil {
			return n, err
		}
		a := NewAuthorship(rev, version, results, ids.of)
		if len(a.Files) == 0 {
			continue
		}
		if err := g.WriteNote(ctx, rev, a); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// agentIDs are the ids the agents gave loom's sessions, read once each.
type agentIDs struct {
	ctx context.Context
	b   *Blamer
	ids map[string]string
}

// SessionReader reads a session of the store (loom.Store does).
type SessionReader interface {
	Session(ctx context.Context, id string) (*loom.Session, error)
}

// of is the id session id's agent gave it: the part of an imported
// session's key after its tool's name; loom's id for its own sessions
// or when no store tells.
func (a *agentIDs) of(id string) string {
	if own, ok := a.ids[id]; ok {
		return own
	}
	own := id
	// The sessions are read from Sessions, which the wiring that opens
	// the store hands in; without them, loom's id stands.
	if st := a.b.Sessions; st != nil {
		if s, err := st.Session(a.ctx, id); err == nil && s.Source != nil {
			if _, native, ok := strings.Cut(s.Key, ":"); ok && native != "" {
				own = native
			}
		}
	}
	a.ids[id] = own
	return own
}

// applyNotes credits the lines of out (blamed as lines) that notes'
// records account for and nothing else did: a note's line numbers are
// those of its commit's file, which git blame gives each line it dates
// to that commit (its original line).
func applyNotes(lines []blamed, out []Line, recs []Record) {
	type at struct {
		commit, path string
		n            int
	}
	index := map[at]int{}
	for i, l := range lines {
		if out[i].SessionID == "" && out[i].Source == "" {
			index[at{l.Commit, l.Path, l.OrigLine}] = i
		}
	}
	for _, rec := range recs {
		origins := rec.origins()
		for _, f := range rec.Files {
			for _, c := range f.Conversations {
				for _, rg := range c.Ranges {
					who := c.Contributor
					if rg.Contributor != nil {
						who = rg.Contributor
					}
					for n := rg.StartLine; n <= rg.EndLine && who != nil; n++ {
						i, ok := index[at{rec.VCS.Revision, f.Path, n}]
						if !ok {
							continue
						}
						delete(index, at{rec.VCS.Revision, f.Path, n})
						traceLine(&out[i], who, c.URL, rec.Tool, origins)
						out[i].Source = rec.source
					}
				}
			}
		}
	}
}

// mayHaveRef says whether the repository of git directory gitDir may
// hold ref: false only when its refs are files (no reftable) and
// neither the ref's file nor a line of packed-refs names it, in the
// directory shared by its work trees (commondir).
func mayHaveRef(gitDir, ref string) bool {
	common := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = c
	}
	if _, err := os.Lstat(filepath.Join(common, "reftable")); err == nil {
		return true
	}
	for _, dir := range []string{common, gitDir} {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(ref))); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	packed, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	return err != nil || bytes.Contains(packed, []byte(" "+ref+"\n"))
}
