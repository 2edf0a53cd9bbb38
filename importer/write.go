package importer

import (
	"context"
	"encoding/json"
	"errors"
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
func (im *Importer) write(ctx context.Context, f Format, res *Result, waitForParents bool, tr *ToolReport) error {
	tool := f.Tool()
	tr.ids = map[string]string{}
	if err := im.flushBundleOf(ctx, tool, res); err != nil {
		return err
	}
	if err := im.otherTitles(ctx, tool, res); err != nil {
		return err
	}
	if err := im.leaveInline(ctx, tool, res); err != nil {
		return err
	}
	ours := im.ours(tool, res)
	if waitForParents {
		if err := im.parentsRead(ctx, tool, res, ours); err != nil {
			return err
		}
	}
	todo, err := im.sessionIDs(ctx, tool, res, tr)
	if err != nil {
		return err
	}
	var fresh []*loom.SessionData
	for _, p := range todo {
		d, err := im.writeSession(ctx, f, res, p, ours, tr)
		if err != nil {
			return err
		}
		if d != nil {
			fresh = append(fresh, d)
		}
	}
	if len(fresh) > 0 && !im.DryRun {
		for _, d := range fresh {
			im.pending.add(d)
		}
	}
	return nil
}

// flushBundleOf writes the pending bundle first when one of res's
// sessions, or its parent, is in it: then what is read of it from the
// store is whole.
func (im *Importer) flushBundleOf(ctx context.Context, tool string, res *Result) error {
	for _, s := range res.Sessions {
		if im.pending.keys[tool+":"+s.SourceID] || (s.ParentSourceID != "" && im.pending.keys[tool+":"+s.ParentSourceID]) {
			return im.flush(ctx)
		}
	}
	return nil
}

// ours is the source ids of res's sessions; it gives them the titles
// other bundles gave them.
func (im *Importer) ours(tool string, res *Result) map[string]bool {
	ours := make(map[string]bool, len(res.Sessions))
	for _, s := range res.Sessions {
		ours[s.SourceID] = true
		if t, ok := im.titles[tool+":"+s.SourceID]; ok {
			s.Title = t
		}
	}
	return ours
}

// parentsRead is errParentLater when a session of res has a parent in
// a bundle not read yet: it waits for the end of the run, so that it
// links to it.
func (im *Importer) parentsRead(ctx context.Context, tool string, res *Result, ours map[string]bool) error {
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
	return nil
}

// toWrite is a session of a bundle on its way to the store: what its
// reader found, the stored session it adds to (nil for a new one) and
// its messages.
type toWrite struct {
	src      *Session
	existing *loom.Session
	msgs     []*loom.Message
}

// sessionIDs gives every session of res its loom id first (in tr.ids),
// so that parents, children and the agent parts that link them can be
// written in any order. A session whose id cannot be a key is a problem
// and left out.
func (im *Importer) sessionIDs(ctx context.Context, tool string, res *Result, tr *ToolReport) ([]toWrite, error) {
	var todo []toWrite
	for _, s := range res.Sessions {
		if err := loom.ValidKey(tool + ":" + s.SourceID); err != nil || s.SourceID == "" {
			tr.problem(Problem{File: s.Path, Reason: "session id " + quote(s.SourceID) + " cannot be a key"})
			continue
		}
		existing, err := im.find(ctx, tool+":"+s.SourceID)
		if err != nil {
			return nil, err
		}
		if existing != nil {
			tr.ids[s.SourceID] = existing.ID
		} else if id, ok := im.remade[tool+":"+s.SourceID]; ok {
			tr.ids[s.SourceID] = id
		} else if tr.ids[s.SourceID], err = im.newID(ctx, tool+":"+s.SourceID, s.started()); err != nil {
			return nil, err
		}
		todo = append(todo, toWrite{s, existing, s.Messages})
	}
	return todo, nil
}

// writeSession writes one session of the bundle: a stored one grows in
// place; a new one is returned for the bundle's transaction (nil when it
// is left out).
func (im *Importer) writeSession(ctx context.Context, f Format, res *Result, p toWrite, ours map[string]bool, tr *ToolReport) (*loom.SessionData, error) {
	s := p.src
	kind, parentID, skip, err := im.lineage(ctx, f.Tool(), p, tr)
	if err != nil || skip {
		return nil, err
	}
	for _, m := range p.msgs {
		if err := im.prepare(ctx, f, s, m, tr.ids); err != nil {
			return nil, err
		}
	}
	if p.msgs, err = im.countOnce(ctx, tr.ids[s.SourceID], p.msgs); err != nil {
		return nil, err
	}
	if p.existing == nil {
		return im.newData(ctx, f, res, p, kind, parentID, ours, tr)
	}
	grow := im.grow
	if im.seg != nil && s.Path == im.seg.main {
		grow = im.growSegment
	}
	if err := grow(ctx, f, s, p.existing, p.msgs, tr); err != nil {
		return nil, err
	}
	im.count(p.existing.ID, p.msgs)
	return nil, nil
}

// lineage is the kind of session p and the loom id of its parent: a
// handed-off file is a fork of the session it continues, a sub-agent or
// fork one of its parent (a main session when that is nowhere to be
// found). skip is true when the file holds only what it carried over.
func (im *Importer) lineage(ctx context.Context, tool string, p toWrite, tr *ToolReport) (kind, parentID string, skip bool, err error) {
	s := p.src
	kind = s.Kind
	if kind == "" {
		kind = loom.KindMain
	}
	if kind == loom.KindMain && s.Origin != nil && p.existing == nil {
		origin, err := im.origin(ctx, s.Origin)
		if err != nil || origin == nil {
			return kind, "", false, err
		}
		if none, err := im.nothingNew(ctx, origin, s.Origin.Turn, p.msgs); err != nil {
			return "", "", false, err
		} else if none {
			// The file holds only what it carried over from the
			// session it continues: the tool has added nothing yet,
			// and a copy would be that session again. It comes in
			// once the tool writes to it (the file changes).
			tr.SessionsUnchanged++
			return "", "", true, nil
		}
		s.ForkTurn = s.Origin.Turn
		if s.Title == "" {
			// The session it continues names it, not the
			// first prompt carried over from it.
			s.Title = origin.Title
		}
		return loom.KindFork, origin.ID, false, nil
	}
	if kind == loom.KindMain {
		return kind, "", false, nil
	}
	parentID, err = im.parent(ctx, tool, s.ParentSourceID, tr.ids)
	if err != nil {
		return "", "", false, err
	}
	if parentID == "" {
		kind = loom.KindMain // its parent is nowhere to be found
	}
	return kind, parentID, false, nil
}

// newData is the data of new session p for the bundle's transaction; nil
// when it is not valid (a problem) or a branch stored already.
func (im *Importer) newData(ctx context.Context, f Format, res *Result, p toWrite, kind, parentID string, ours map[string]bool, tr *ToolReport) (*loom.SessionData, error) {
	s, tool := p.src, f.Tool()
	x := im.newSession(f, s, tr.ids[s.SourceID], kind, parentID, p.msgs)
	if kind == loom.KindSubagent {
		// A sub-agent that worked in a folder of its own (cd'd
		// into a subfolder) is still its parent's work.
		if pp, err := im.parentProject(ctx, tool, s.ParentSourceID, res); err != nil {
			return nil, err
		} else if pp != nil {
			x.Project = *pp
		}
	}
	d := &loom.SessionData{Session: x, Messages: numbered(x.ID, p.msgs)}
	if err := d.Validate(); err != nil {
		tr.problem(Problem{File: s.Path, Reason: loom.ErrorMessage(err)})
		delete(tr.ids, s.SourceID)
		return nil, nil
	}
	if kind == loom.KindFork && im.isStoredBranch(ctx, s, res, tr.ids) {
		tr.SessionsUnchanged++
		return nil, nil
	}
	if kind == loom.KindSubagent && !ours[s.ParentSourceID] && !im.DryRun {
		// Its parent, in another file, was written before it and
		// could not name it yet.
		if err := im.linkFromParent(ctx, tool+":"+s.ParentSourceID, parentID, s.SourceID, x.ID); err != nil {
			return nil, err
		}
	}
	if im.seg != nil {
		im.seg.seen[x.ID], im.seg.cursor[x.ID] = true, int64(len(p.msgs))
	}
	im.count(x.ID, p.msgs)
	tr.SessionsNew++
	tr.MessagesAdded += len(p.msgs)
	tr.changed(x, true, len(p.msgs))
	return d, nil
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
