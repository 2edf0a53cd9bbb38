package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// maxCompared bounds how many of a session's newest stored messages a
// re-import compares with the source for results and parts that arrived
// since: a tool's file grows at its end.
const maxCompared = 200

// isStoredBranch reports whether fork s, an abandoned branch of its
// parent's tree, is the branch stored as the parent already: the parent
// was imported while the branch was its newest, and the tool has moved
// on to another since.
func (im *Importer) isStoredBranch(ctx context.Context, s *Session, res *Result, ids map[string]string) bool {
	var main *Session
	for _, o := range res.Sessions {
		if o.SourceID == s.ParentSourceID {
			main = o
		}
	}
	if main == nil || len(s.Messages) == 0 {
		return false
	}
	shared := 0
	for shared < len(s.Messages) && shared < len(main.Messages) && s.Messages[shared].ID == main.Messages[shared].ID {
		shared++
	}
	if shared >= len(s.Messages) {
		return false
	}
	got, err := im.Store.Messages(ctx, ids[s.ParentSourceID], loom.MessageQuery{Before: int64(shared) + 2, Limit: 1})
	return err == nil && len(got) == 1 && got[0].Seq == int64(shared)+1 &&
		(got[0].ID == s.Messages[shared].ID || got[0].ID == s.Renamed[s.Messages[shared].ID])
}

// keepStoredIDs gives each message of msgs (the source's, seq i at
// msgs[i-1]) that stored, messages of its copy, holds under the id an
// earlier reader gave it (s.Renamed) that id back, and its parts theirs.
func (s *Session) keepStoredIDs(stored, msgs []*loom.Message) {
	if len(s.Renamed) == 0 {
		return
	}
	for _, x := range stored {
		i := int(x.Seq) - 1
		if i < 0 || i >= len(msgs) {
			continue
		}
		m := msgs[i]
		old, ok := s.Renamed[m.ID]
		if !ok || old != x.ID {
			continue
		}
		for j := range m.Parts {
			if rest, ok := strings.CutPrefix(m.Parts[j].ID, m.ID); ok {
				m.Parts[j].ID = old + rest
			}
		}
		m.ID = old
	}
}

// grow brings session x, imported from s before, up to date: the
// messages s has beyond x's are appended, and parts that changed or
// arrived since (a tool's result, the rest of a reply) are updated. When
// s no longer continues x (the tool rewound or edited its conversation),
// s goes to a fork of x from where they part.
func (im *Importer) grow(ctx context.Context, f Format, s *Session, x *loom.Session, msgs []*loom.Message, tr *ToolReport) error {
	msgs, err := im.restored(ctx, s, x, msgs)
	if err != nil {
		return err
	}
	src, kept, err := im.olderReading(ctx, s, x, msgs)
	if err != nil {
		return err
	}
	msgs = src
	k := x.MessageCount
	var tail []*loom.Message
	if k > 0 {
		var err error
		q := loom.MessageQuery{Limit: min(k, maxCompared)}
		if im.reimporting {
			q.Limit = 0
		}
		tail, err = im.Store.Messages(ctx, x.ID, q)
		if err != nil {
			return err
		}
		s.keepStoredIDs(tail, msgs)
	}
	if len(tail) > 0 && (k > len(msgs) || msgs[k-1].ID != tail[len(tail)-1].ID) {
		if older := withoutAdded(s, msgs); len(older) < len(msgs) && k <= len(older) && older[k-1].ID == tail[len(tail)-1].ID &&
			(len(tail) < 2 || older[k-2].ID == tail[len(tail)-2].ID) {
			// The copy is an earlier reader's, which made none of
			// s.Added: it grows as that reader would grow it.
			msgs = older
		} else {
			return im.diverged(ctx, f, s, x, msgs, kept, tr)
		}
	}
	changed := false
	for _, stored := range tail {
		src := msgs[stored.Seq-1]
		if src.ID != stored.ID || kept[src.ID] {
			continue
		}
		if im.update(x, stored, src, tr) {
			changed = true
		}
	}
	if im.remodel(x, s, msgs) {
		changed = true
	}
	add := msgs[min(k, len(msgs)):]
	switch {
	case len(add) > 0:
		tr.SessionsGrown++
		tr.MessagesAdded += len(add)
		tr.changed(x, false, len(add))
		if !im.DryRun {
			im.pending.change(x.Key, loom.ImportChange{Session: x, Messages: add})
		}
	case changed:
		tr.SessionsGrown++
		tr.changed(x, false, 0)
	default:
		tr.SessionsUnchanged++
	}
	im.settle(x, s, msgs)
	if t := loom.TitleFrom(s.Title); t != "" && t != x.Title && !im.DryRun && !im.reimporting {
		im.pending.change(x.Key, loom.ImportChange{SessionID: x.ID, Title: &t})
	}
	return nil
}

// settle gives x the time it was last active that a fresh import of s,
// read as msgs, would give it (newSession), where that is later than the
// one x holds: a line that only completes a stored message (a reply's
// last line, a tool's result) moves it, which no append does.
func (im *Importer) settle(x *loom.Session, s *Session, msgs []*loom.Message) {
	at := lastActive(s, msgs, x.CreatedAt)
	if im.DryRun || !settles(&x.UpdatedAt, &at) {
		return
	}
	im.pending.change(x.Key, loom.ImportChange{SessionID: x.ID, Settled: &loom.SettledTimes{UpdatedAt: &at}})
}

// settles reports whether time at, read from the source, is later than
// held, the one stored (nil: none), to the millisecond a store keeps.
func settles(held, at *time.Time) bool {
	if at == nil {
		return false
	}
	return held == nil || at.Truncate(time.Millisecond).After(held.Truncate(time.Millisecond))
}

// update gives stored, a message of x, what src, the source's reading
// of it, has that it has not: its final usage, and parts that changed
// or arrived since; it reports whether there was any.
func (im *Importer) update(x *loom.Session, stored, src *loom.Message, tr *ToolReport) bool {
	changed := false
	if !sameUsage(stored.Usage, src.Usage) {
		// A reply imported while its tool was still writing it
		// (Claude Code's last line of a reply has its final output
		// tokens, Codex's token count follows the call's items).
		changed = true
		if !im.DryRun {
			u := src.Usage
			im.pending.change(x.Key, loom.ImportChange{SessionID: x.ID, Seq: stored.Seq, Usage: &u})
		}
	}
	if settles(stored.CompletedAt, src.CompletedAt) && !im.DryRun {
		// Completed by lines read since it was stored; not a change
		// of what it says.
		at := *src.CompletedAt
		im.pending.change(x.Key, loom.ImportChange{SessionID: x.ID, Seq: stored.Seq, Settled: &loom.SettledTimes{CompletedAt: &at}})
	}
	for _, p := range src.Parts {
		if samePart(stored.Parts, p) {
			continue
		}
		if p.Type == loom.PartTool {
			tr.ToolsUpdated++
		}
		changed = true
		if !im.DryRun {
			im.pending.change(x.Key, loom.ImportChange{SessionID: x.ID, Seq: stored.Seq, Part: &p})
		}
	}
	return changed
}

// remodel gives x the model a fresh import of s, read as msgs, would
// give it (newSession), where s names one x lacks or another: a session
// first read before its first reply (what capture and the hooks see)
// has none until the reply arrives. The change is queued before any
// append of the same reading, so that the session the append returns
// has it. It reports whether there was one.
func (im *Importer) remodel(x *loom.Session, s *Session, msgs []*loom.Message) bool {
	model := s.Model
	for i := 0; model == "" && i < len(msgs); i++ {
		model = msgs[i].Model
	}
	if model == "" || model == x.Model {
		return false
	}
	if !im.DryRun {
		im.pending.change(x.Key, loom.ImportChange{SessionID: x.ID, Model: &model})
		x.Model = model
	}
	return true
}

// diverged handles a source session that no longer continues its loom
// copy x: what it has from the point where they part goes to a fork of
// x, keyed by the first message that differs, so nothing is lost and
// nothing is stored twice. A source that only got shorter (a truncated
// or rewritten file) adds nothing.
func (im *Importer) diverged(ctx context.Context, f Format, s *Session, x *loom.Session, view []*loom.Message, kept map[string]bool, tr *ToolReport) error {
	stored, err := im.Store.Messages(ctx, x.ID, loom.MessageQuery{})
	if err != nil {
		return err
	}
	s.keepStoredIDs(stored, view)
	j := 0
	for j < len(stored) && j < len(view) && stored[j].ID == view[j].ID {
		j++
	}
	if j >= len(view) {
		tr.SessionsUnchanged++
		return nil
	}
	// The fork holds the source's messages, not the older reading's.
	msgs := make([]*loom.Message, 0, len(view))
	for i, m := range view {
		if _, older := s.Replaced[m.ID]; older && kept[m.ID] {
			if i < j {
				j--
			}
			continue
		}
		msgs = append(msgs, m)
	}
	msgs = countedOnce(stored, msgs)
	turns := 0
	for _, m := range msgs[:j] {
		if m.Role == loom.RoleUser {
			turns++
		}
	}
	if msgs[j].Role != loom.RoleUser && turns > 0 {
		turns-- // they part inside a turn: the fork shares the turns before it
	}
	branch := *s
	branch.SourceID = s.SourceID + "@" + msgs[j].ID
	branch.Kind, branch.ParentSourceID, branch.ForkTurn = loom.KindFork, s.SourceID, turns
	key := f.Tool() + ":" + branch.SourceID
	if err := loom.ValidKey(key); err != nil {
		tr.problem(Problem{File: s.Path, Reason: "session " + quote(s.SourceID) + " changed in place and its branch cannot be keyed"})
		return nil
	}
	existing, err := im.find(ctx, key)
	if err != nil {
		return err
	}
	if existing != nil {
		return im.grow(ctx, f, &branch, existing, msgs, tr)
	}
	id, err := im.newID(ctx, key, msgs[j].CreatedAt)
	if err != nil {
		return err
	}
	fork := im.newSession(f, &branch, id, loom.KindFork, x.ID, msgs)
	d := &loom.SessionData{Session: fork, Messages: numbered(fork.ID, msgs)}
	if err := d.Validate(); err != nil {
		tr.problem(Problem{File: s.Path, Reason: loom.ErrorMessage(err)})
		return nil
	}
	tr.SessionsNew++
	tr.MessagesAdded += len(msgs)
	tr.changed(fork, true, len(msgs))
	if !im.DryRun {
		im.pending.add(d)
	}
	return nil
}

// withoutAdded is msgs without the messages an earlier version of the
// reader did not make (s.Added).
func withoutAdded(s *Session, msgs []*loom.Message) []*loom.Message {
	if len(s.Added) == 0 {
		return msgs
	}
	out := make([]*loom.Message, 0, len(msgs))
	for _, m := range msgs {
		if !s.Added[m.ID] {
			out = append(out, m)
		}
	}
	return out
}

// countedOnce returns msgs, a fork's, with no usage on the messages that
// stored, its parent's, holds too: the same message id is the same model
// call (a Claude Code reply's line uuid, a Codex turn's id), counted once,
// in the session that held it first. A rewritten file whose fork repeats
// what the file held before then adds only what is new to every usage
// report: the fork's totals, the daily roll-up, the per-model report.
func countedOnce(stored, msgs []*loom.Message) []*loom.Message {
	held := make(map[string]bool, len(stored))
	for _, m := range stored {
		held[m.ID] = true
	}
	out := make([]*loom.Message, len(msgs))
	for i, m := range msgs {
		out[i] = m
		if held[m.ID] && !m.Usage.IsZero() {
			c := *m
			c.Usage = loom.Usage{}
			out[i] = &c
		}
	}
	return out
}

// olderReading returns msgs as x holds them when an earlier version of
// the reader imported them (s.Replaced): each message it made that x
// still holds, right after the message that holds what it held now, is
// put back in its place, so that msgs and x line up by seq again. kept
// names those messages and the ones they are part of now: x keeps them
// as they are, nothing of them is stored again or changed.
func (im *Importer) olderReading(ctx context.Context, s *Session, x *loom.Session, msgs []*loom.Message) ([]*loom.Message, map[string]bool, error) {
	if len(s.Replaced) == 0 {
		return msgs, nil, nil
	}
	now := map[string][]string{}
	for old, id := range s.Replaced {
		now[id] = append(now[id], old)
	}
	var view []*loom.Message
	var kept map[string]bool
	for i, m := range msgs {
		view = append(view, m)
		olds := now[m.ID]
		if len(olds) == 0 || len(view) >= x.MessageCount {
			continue
		}
		got, err := im.Store.Messages(ctx, x.ID, loom.MessageQuery{After: int64(len(view)), Limit: 1, Oldest: true})
		if err != nil {
			return nil, nil, err
		}
		if len(got) != 1 || !slices.Contains(olds, got[0].ID) || (i+1 < len(msgs) && msgs[i+1].ID == got[0].ID) {
			continue
		}
		if kept == nil {
			kept = map[string]bool{}
		}
		kept[m.ID], kept[got[0].ID] = true, true
		view = append(view, &loom.Message{ID: got[0].ID, Role: got[0].Role, CreatedAt: got[0].CreatedAt})
	}
	if kept == nil {
		return msgs, nil, nil
	}
	return view, kept, nil
}

// sameUsage reports whether stored is u as the store keeps it (costs
// rounded).
func sameUsage(stored, u loom.Usage) bool {
	u.CostUSD, stored.CostUSD = loom.RoundCost(u.CostUSD), loom.RoundCost(stored.CostUSD)
	return stored == u
}

// samePart reports whether parts hold p as it is.
func samePart(parts []loom.Part, p loom.Part) bool {
	for _, q := range parts {
		if q.ID == p.ID {
			a, _ := json.Marshal(q)
			b, _ := json.Marshal(p)
			return bytes.Equal(a, b)
		}
	}
	return false
}
