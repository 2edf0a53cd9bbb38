package importer

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
)

// write stores what f's reader found: new sessions whole (one transaction
// for the bundle), and the new messages, parts and tool results of
// sessions imported before. Everything a file holds is written, the
// reply its tool may still be writing included: when the file grows,
// the next run completes that reply in place (grow).
func (im *Importer) write(ctx context.Context, f Format, res *Result, waitForParents bool, tr *ToolReport) (err error) {
	tool := f.Tool()
	tr.ids = map[string]string{}
	for _, s := range res.Sessions {
		if im.pending.keys[tool+":"+s.SourceID] || (s.ParentSourceID != "" && im.pending.keys[tool+":"+s.ParentSourceID]) {
			// It or its parent is in a bundle not written yet: write it
			// first, so that what is read of it from the store is whole.
			if err := im.flush(ctx); err != nil {
				return err
			}
			break
		}
	}
	if err := im.otherTitles(ctx, tool, res); err != nil {
		return err
	}
	if err := im.leaveInline(ctx, tool, res); err != nil {
		return err
	}
	ours := make(map[string]bool, len(res.Sessions))
	for _, s := range res.Sessions {
		ours[s.SourceID] = true
		if t, ok := im.titles[tool+":"+s.SourceID]; ok {
			s.Title = t
		}
	}
	if waitForParents {
		// A session whose parent is in a bundle not read yet waits for
		// the end of the run, so that it links to it.
		for _, s := range res.Sessions {
			if s.Kind == "" || s.Kind == loom.KindMain || s.ParentSourceID == "" || ours[s.ParentSourceID] {
				continue
			}
			p, err := im.find(ctx, tool+":"+s.ParentSourceID)
			if err != nil {
				return err
			}
			if p == nil {
				return errParentLater
			}
		}
	}
	type pending struct {
		src      *Session
		existing *loom.Session
		msgs     []*loom.Message
	}
	var todo []pending
	// First every session's loom id, so that parents, children and the
	// agent parts that link them can be written in any order.
	for _, s := range res.Sessions {
		if err := loom.ValidKey(tool + ":" + s.SourceID); err != nil || s.SourceID == "" {
			tr.problem(Problem{File: s.Path, Reason: "session id " + quote(s.SourceID) + " cannot be a key"})
			continue
		}
		msgs := s.Messages
		existing, err := im.find(ctx, tool+":"+s.SourceID)
		if err != nil {
			return err
		}
		if existing != nil {
			tr.ids[s.SourceID] = existing.ID
		} else if id, ok := im.remade[tool+":"+s.SourceID]; ok {
			tr.ids[s.SourceID] = id
		} else if tr.ids[s.SourceID], err = im.newID(ctx, tool+":"+s.SourceID, s.started()); err != nil {
			return err
		}
		todo = append(todo, pending{s, existing, msgs})
	}
	var fresh []*loom.SessionData
	for _, p := range todo {
		s := p.src
		parentID, kind := "", s.Kind
		if kind == "" {
			kind = loom.KindMain
		}
		if kind == loom.KindMain && s.Origin != nil && p.existing == nil {
			var origin *loom.Session
			if origin, err = im.origin(ctx, s.Origin); err != nil {
				return err
			}
			if origin != nil {
				if none, err := im.nothingNew(ctx, origin, s.Origin.Turn, p.msgs); err != nil {
					return err
				} else if none {
					// The file holds only what it carried over from the
					// session it continues: the tool has added nothing yet,
					// and a copy would be that session again. It comes in
					// once the tool writes to it (the file changes).
					tr.SessionsUnchanged++
					continue
				}
				parentID = origin.ID
				kind, s.ForkTurn = loom.KindFork, s.Origin.Turn
				if s.Title == "" {
					// The session it continues names it, not the
					// first prompt carried over from it.
					s.Title = origin.Title
				}
			}
		} else if kind != loom.KindMain {
			parentID, err = im.parent(ctx, tool, s.ParentSourceID, tr.ids)
			if err != nil {
				return err
			}
			if parentID == "" {
				kind = loom.KindMain // its parent is nowhere to be found
			}
		}
		for _, m := range p.msgs {
			if err := im.prepare(ctx, f, s, m, tr.ids); err != nil {
				return err
			}
		}
		if p.msgs, err = im.countOnce(ctx, tr.ids[s.SourceID], p.msgs); err != nil {
			return err
		}
		if p.existing == nil {
			x := im.newSession(f, s, tr.ids[s.SourceID], kind, parentID, p.msgs)
			if kind == loom.KindSubagent {
				// A sub-agent that worked in a folder of its own (cd'd
				// into a subfolder) is still its parent's work.
				if pp, err := im.parentProject(ctx, tool, s.ParentSourceID, res); err != nil {
					return err
				} else if pp != nil {
					x.Project = *pp
				}
			}
			d := &loom.SessionData{Session: x, Messages: numbered(x.ID, p.msgs)}
			if err := d.Validate(); err != nil {
				tr.problem(Problem{File: s.Path, Reason: loom.ErrorMessage(err)})
				delete(tr.ids, s.SourceID)
				continue
			}
			if kind == loom.KindFork && im.isStoredBranch(ctx, s, res, tr.ids) {
				tr.SessionsUnchanged++
				continue
			}
			if kind == loom.KindSubagent && !ours[s.ParentSourceID] && !im.DryRun {
				// Its parent, in another file, was written before it and
				// could not name it yet.
				if err := im.linkFromParent(ctx, tool+":"+s.ParentSourceID, parentID, s.SourceID, x.ID); err != nil {
					return err
				}
			}
			fresh = append(fresh, d)
			if im.seg != nil {
				im.seg.seen[x.ID], im.seg.cursor[x.ID] = true, int64(len(p.msgs))
			}
			im.count(x.ID, p.msgs)
			tr.SessionsNew++
			tr.MessagesAdded += len(p.msgs)
			tr.changed(x, true, len(p.msgs))
			continue
		}
		grow := im.grow
		if im.seg != nil && s.Path == im.seg.main {
			grow = im.growSegment
		}
		if err := grow(ctx, f, s, p.existing, p.msgs, tr); err != nil {
			return err
		}
		im.count(p.existing.ID, p.msgs)
	}
	if len(fresh) > 0 && !im.DryRun {
		for _, d := range fresh {
			im.pending.add(d)
		}
	}
	return nil
}

// otherTitles keeps the titles res gives sessions of other bundles
// for the rest of the run, and sets those of the ones stored already
// (not in a reimport, which keeps the titles it finds).
func (im *Importer) otherTitles(ctx context.Context, tool string, res *Result) error {
	if len(res.Titles) > 0 && im.titles == nil {
		im.titles = map[string]string{}
	}
	for src, title := range res.Titles {
		key := tool + ":" + src
		im.titles[key] = title
		t := loom.TitleFrom(title)
		if t == "" || im.DryRun || im.reimporting {
			continue
		}
		x, err := im.find(ctx, key)
		if err != nil {
			return err
		}
		if x != nil && x.Title != t {
			im.pending.change(x.Key, loom.ImportChange{SessionID: x.ID, Title: &t})
		}
	}
	return nil
}

// leaveInline leaves out of res its Inline sessions, and their forks,
// that are stored already from another file: read from the sub-agent's
// own file, which a reading of its parent's file alone (a reimport's,
// or one made after that file went its own way) does not see.
func (im *Importer) leaveInline(ctx context.Context, tool string, res *Result) error {
	left := map[string]bool{}
	kept := res.Sessions[:0]
	for _, s := range res.Sessions {
		if !s.Inline {
			kept = append(kept, s)
			continue
		}
		if left[s.ParentSourceID] {
			left[s.SourceID] = true
			continue
		}
		x, err := im.find(ctx, tool+":"+s.SourceID)
		if err != nil {
			return err
		}
		if x != nil && x.Source != nil && x.Source.Path != "" && x.Source.Path != s.Path {
			left[s.SourceID] = true
			continue
		}
		kept = append(kept, s)
	}
	res.Sessions = kept
	return nil
}

// started is when source session s began: its own start, else its first
// message's time; zero when it names neither.
func (s *Session) started() time.Time {
	if !s.CreatedAt.IsZero() {
		return s.CreatedAt
	}
	for _, m := range s.Messages {
		if !m.CreatedAt.IsZero() {
			return m.CreatedAt
		}
	}
	return time.Time{}
}

// errParentLater says a bundle waits for its sessions' parents.
var errParentLater = errors.New("parent not imported yet")

// find returns the live imported session with key, nil when there is
// none. A conversation that continues an import on the server has its
// key too (outside every project), but it is loom's own, not the copy.
func (im *Importer) find(ctx context.Context, key string) (*loom.Session, error) {
	ss, err := im.Store.Sessions(ctx, loom.SessionFilter{UserID: im.UserID, Key: key, Limit: 10, Archived: loom.WithArchived})
	if err != nil {
		return nil, err
	}
	for _, s := range ss {
		if s.Source != nil {
			return s, nil
		}
	}
	return nil, nil
}

// parent is the loom id of the session with source id src: one of the
// bundle's, or one imported before; empty when there is none.
func (im *Importer) parent(ctx context.Context, tool, src string, ids map[string]string) (string, error) {
	if src == "" {
		return "", nil
	}
	if id, ok := ids[src]; ok {
		return id, nil
	}
	p, err := im.find(ctx, tool+":"+src)
	if err != nil || p == nil {
		return "", err
	}
	ids[src] = p.ID
	return p.ID, nil
}

// origin is the loom session a handed-off file continues, when it is
// still this user's; nil when it is gone (the session comes in as a main
// session of its own).
func (im *Importer) origin(ctx context.Context, o *handoff.Origin) (*loom.Session, error) {
	if o.SessionID == "" {
		return nil, nil
	}
	x, err := im.Store.Session(ctx, o.SessionID)
	switch {
	case loom.ErrorCode(err) == loom.ENOTFOUND:
		return nil, nil
	case err != nil:
		return nil, err
	case x.UserID != im.UserID || x.DeletedAt != nil:
		return nil, nil
	}
	return x, nil
}

// NoResult is the error of an imported tool call whose result is not in
// its source file: the tool was killed, or has not written it yet (the
// next import completes the call in place when it does).
const NoResult = "no result in the source file"

// sourceSessionKey is the metadata key under which an agent part keeps
// the source id of a sub-agent session not imported yet (in another
// file), until that session comes in and the part names it.
const sourceSessionKey = "source_session_id"

// prepare completes a message as the importer stores it: agent parts
// name loom sessions (one not imported yet keeps its source id in its
// metadata), a tool call without its result is an error (a stored call
// is completed or error, never running), and usage has its cost and
// model call.
func (im *Importer) prepare(ctx context.Context, f Format, s *Session, m *loom.Message, ids map[string]string) error {
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Type == loom.PartAgent && p.SessionID != "" {
			src := p.SessionID
			id, err := im.parent(ctx, f.Tool(), src, ids)
			if err != nil {
				return err
			}
			p.SessionID = id
			if id == "" {
				p.Metadata = withMeta(p.Metadata, sourceSessionKey, src)
			}
		}
		if p.Type == loom.PartTool && p.Status != loom.ToolCompleted && p.Status != loom.ToolError {
			p.Status = loom.ToolError
			if p.Error == "" {
				p.Error = NoResult
			}
		}
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = s.CreatedAt
	}
	if m.Role == loom.RoleAssistant && m.Provider == "" {
		m.Provider = pick(s.Provider, f.Provider())
	}
	u := &m.Usage
	tokens := u.InputTokens + u.OutputTokens + u.ReasoningTokens + u.CacheReadTokens + u.CacheWriteTokens
	if tokens == 0 {
		return nil
	}
	if u.APICalls == 0 && m.Role == loom.RoleAssistant {
		u.APICalls = 1
	}
	if u.CostUSD == 0 && im.Price != nil {
		provider, model := pick(m.Provider, f.Provider()), pick(m.Model, s.Model)
		if c, ok := im.Price(provider, model, *u); ok {
			u.CostUSD = c
		}
	}
	return nil
}

// withMeta is metadata meta (a JSON object, or none) with key set to
// value.
func withMeta(meta json.RawMessage, key, value string) json.RawMessage {
	m := map[string]any{}
	if len(meta) > 0 && json.Unmarshal(meta, &m) != nil {
		m = map[string]any{"metadata": meta}
	}
	m[key] = value
	b, _ := json.Marshal(m)
	return b
}

// linkFromParent makes the agent parts of parent that wait for the
// sub-agent session with source id src (written before it, from another
// file) name its loom id.
//
// The parent's messages are read a page at a time, oldest first: a
// parent of millions of messages (a session file of gigabytes) is never
// held whole.
func (im *Importer) linkFromParent(ctx context.Context, parentKey, parentID, src, id string) error {
	var after int64
	for {
		msgs, err := im.Store.Messages(ctx, parentID, loom.MessageQuery{After: after, Limit: linkPage, Oldest: true})
		if err != nil {
			return err
		}
		for _, m := range msgs {
			after = max(after, m.Seq)
			im.linkParts(parentKey, parentID, src, id, m)
		}
		if len(msgs) < linkPage {
			return nil
		}
	}
}

// linkPage is how many of a parent's messages linkFromParent reads at
// a time (a test makes it small).
var linkPage = 1000

// linkParts makes the agent parts of m, a message of parent, that wait
// for the sub-agent session with source id src name its loom id.
func (im *Importer) linkParts(parentKey, parentID, src, id string, m *loom.Message) {
	for _, p := range m.Parts {
		if p.Type != loom.PartAgent || p.SessionID != "" || len(p.Metadata) == 0 {
			continue
		}
		var meta map[string]any
		if json.Unmarshal(p.Metadata, &meta) != nil || meta[sourceSessionKey] != src {
			continue
		}
		delete(meta, sourceSessionKey)
		p.SessionID, p.Metadata = id, nil
		if len(meta) > 0 {
			p.Metadata, _ = json.Marshal(meta)
		}
		im.pending.change(parentKey, loom.ImportChange{SessionID: parentID, Seq: m.Seq, Part: &p})
	}
}

func pick(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// parentProject is the project of the session with source id src: the
// one read with it in res, else the one stored; nil when neither has
// a working directory.
func (im *Importer) parentProject(ctx context.Context, tool, src string, res *Result) (*loom.Project, error) {
	for _, s := range res.Sessions {
		if s.SourceID == src && s.Cwd != "" {
			p := im.project(s.Cwd)
			return &p, nil
		}
	}
	p, err := im.find(ctx, tool+":"+src)
	if err != nil || p == nil || p.Project.Root == "" {
		return nil, err
	}
	return &p.Project, nil
}

// newSession is the loom session of source session s.
func (im *Importer) newSession(f Format, s *Session, id, kind, parentID string, msgs []*loom.Message) *loom.Session {
	tool := f.Tool()
	x := &loom.Session{
		ID:        id,
		UserID:    im.UserID,
		Key:       tool + ":" + s.SourceID,
		Surface:   tool,
		Kind:      kind,
		ParentID:  parentID,
		Cwd:       s.Cwd,
		Model:     s.Model,
		Provider:  s.Provider,
		GitBranch: s.GitBranch,
		Source:    &loom.Source{Tool: tool, Version: s.Version, Path: s.Path},
		CreatedAt: s.CreatedAt,
		UpdatedAt: s.UpdatedAt,
	}
	if kind == loom.KindFork {
		x.ForkTurn = s.ForkTurn
	}
	x.Title = Title(&Session{Title: s.Title, Messages: msgs})
	if s.Cwd != "" {
		x.Project = im.project(s.Cwd)
	}
	if x.Provider == "" {
		x.Provider = f.Provider()
	}
	for _, m := range msgs {
		x.Usage.Add(m.Usage)
		if x.Model == "" && m.Model != "" {
			x.Model = m.Model
		}
		if x.Provider == "" && m.Provider != "" {
			x.Provider = m.Provider
		}
	}
	if len(msgs) > 0 && (x.CreatedAt.IsZero() || msgs[0].CreatedAt.Before(x.CreatedAt)) {
		x.CreatedAt = msgs[0].CreatedAt
	}
	if x.CreatedAt.IsZero() {
		x.CreatedAt = im.now()
	}
	x.UpdatedAt = lastActive(s, msgs, x.CreatedAt)
	return x
}

// lastActive is when source session s, read as msgs and started at
// created, was last active: the latest of the time its reader gives it
// (which counts the completion of its replies and tools), its last
// message's and its start.
func lastActive(s *Session, msgs []*loom.Message, created time.Time) time.Time {
	at := s.UpdatedAt
	if len(msgs) > 0 {
		at = later(at, msgs[len(msgs)-1].CreatedAt)
	}
	return later(at, created)
}

// project is the project of a working directory, by the rule of
// loom's own sessions when the directory is on this machine.
func (im *Importer) project(dir string) loom.Project {
	if p, ok := im.projects[dir]; ok {
		return p
	}
	var p loom.Project
	if im.Project != nil {
		p = im.Project(dir)
	} else {
		p = loom.Project{Root: dir, Name: filepath.Base(dir)}
	}
	if im.projects == nil {
		im.projects = map[string]loom.Project{}
	}
	im.projects[dir] = p
	return p
}

// numbered gives msgs their session and seq 1, 2, 3 ….
func numbered(id string, msgs []*loom.Message) []*loom.Message {
	for i, m := range msgs {
		m.SessionID, m.Seq = id, int64(i+1)
	}
	return msgs
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// nothingNew reports whether msgs, a handed-off file's, end where the
// session origin was when it was handed off, at the end of turn turn:
// their last message is that turn's last, the same role and text. Then
// the tool has added nothing yet.
func (im *Importer) nothingNew(ctx context.Context, origin *loom.Session, turn int, msgs []*loom.Message) (bool, error) {
	if len(msgs) == 0 || turn < 1 {
		return false, nil
	}
	then, err := im.Store.Messages(ctx, origin.ID, loom.MessageQuery{Turn: turn})
	if err != nil || len(then) == 0 {
		return false, err
	}
	a, b := then[len(then)-1], msgs[len(msgs)-1]
	return a.Role == b.Role && strings.TrimSpace(a.Text()) != "" && strings.TrimSpace(a.Text()) == strings.TrimSpace(b.Text()), nil
}
