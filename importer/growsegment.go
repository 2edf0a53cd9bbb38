package importer

import (
	"context"
	"strings"

	"github.com/loomhq/loom"
)

// growSegment is grow for a session read from a segment of a big file
// (segment.go): the reading holds a stretch of the session, which
// begins with the messages of the turn the segment before ended in.
// Those are found by id among the stored messages around where the
// readings so far reached, and get what changed in them (a tool's
// result, a reply's final usage); the rest are added after the stored
// ones. A reading that no longer continues the stored copy (a file
// written again in place) adds what it has that the copy does not
// hold, so that nothing is lost nor stored twice; a reimport makes the
// copy again instead (errRemake).
func (im *Importer) growSegment(ctx context.Context, f Format, s *Session, x *loom.Session, msgs []*loom.Message, tr *ToolReport) error {
	k := int64(x.MessageCount)
	cur, resumed := im.seg.cursor[x.ID]
	if !resumed {
		cur = k
		if im.seg.fromStart {
			cur = 0
		}
	}
	n := int64(len(msgs))
	stored, err := im.Store.Messages(ctx, x.ID, loom.MessageQuery{After: max(0, cur-n), Limit: int(2*n + 1), Oldest: true})
	if err != nil {
		return err
	}
	fromStart := im.seg.fromStart && !resumed
	sm := im.matchSegment(x, s, msgs, stored, cur, fromStart, tr)
	if im.remodel(x, s, msgs) {
		sm.changed = true
	}
	if len(sm.add) > 0 && ((sm.matched && sm.last < k) || (!sm.matched && fromStart && k > 0)) {
		sm.diverged = true // new messages, where the copy holds others
	}
	if sm.diverged && im.reimporting {
		im.remakeID = x.ID
		return errRemake
	}
	last := sm.last
	if len(sm.add) > 0 {
		tr.MessagesAdded += len(sm.add)
		if !im.DryRun {
			im.pending.change(x.Key, loom.ImportChange{Session: x, Messages: sm.add})
		}
		last = k + int64(len(sm.add))
	}
	im.seg.cursor[x.ID] = last
	im.countSegment(x, len(sm.add), len(sm.add) > 0 || sm.changed, tr)
	im.settle(x, s, msgs)
	if t := loom.TitleFrom(s.Title); t != "" && t != x.Title && !im.DryRun && !im.reimporting {
		im.pending.change(x.Key, loom.ImportChange{SessionID: x.ID, Title: &t})
	}
	return nil
}

// segMatch is what a segment's reading of a session has against the
// stored messages around the cursor: the messages to add, the seq of the
// last stored one it holds, whether it holds any (matched), whether
// those changed, and whether it no longer continues the stored copy.
type segMatch struct {
	add                        []*loom.Message
	last                       int64
	matched, changed, diverged bool
}

// matchSegment finds msgs, a segment's reading of x, by id among stored
// (by the id an earlier reader gave them too) and gives the ones found
// what changed in them; the rest are to add. fromStart says the reading
// starts at the file's start with no cursor kept.
func (im *Importer) matchSegment(x *loom.Session, s *Session, msgs, stored []*loom.Message, cur int64, fromStart bool, tr *ToolReport) segMatch {
	byID := make(map[string]*loom.Message, len(stored))
	for _, m := range stored {
		byID[m.ID] = m
	}
	sm := segMatch{last: cur}
	for _, m := range msgs {
		st := byID[m.ID]
		if old, renamed := s.Renamed[m.ID]; st == nil && renamed && byID[old] != nil {
			st = byID[old]
			renameMessage(m, old)
		}
		if st == nil {
			sm.add = append(sm.add, m)
			continue
		}
		switch {
		case len(sm.add) > 0:
			sm.diverged = true // a stored message after new ones
		case sm.matched && st.Seq != sm.last+1:
			sm.diverged = true // the reading skips stored messages
		case !sm.matched && fromStart && st.Seq != 1:
			sm.diverged = true // a reading from the start begins elsewhere
		}
		sm.matched, sm.last = true, st.Seq
		if im.update(x, st, m, tr) {
			sm.changed = true
		}
	}
	return sm
}

// countSegment counts session x, which a segment added added messages
// to, grown or not, once across the segments of its file.
func (im *Importer) countSegment(x *loom.Session, added int, grew bool, tr *ToolReport) {
	switch counted, ok := im.seg.seen[x.ID]; {
	case !ok && grew:
		tr.SessionsGrown++
		tr.changed(x, false, added)
	case !ok:
		tr.SessionsUnchanged++
	case !counted && grew:
		// Unchanged in the segments before, grown in this one.
		tr.SessionsUnchanged--
		tr.SessionsGrown++
		tr.changed(x, false, added)
	case added > 0:
		// One change per session, counting every segment's messages.
		tr.changed(x, false, added)
	}
	im.seg.seen[x.ID] = im.seg.seen[x.ID] || grew
}

// renameMessage gives m, and its parts (whose ids start with m's), the
// id old an earlier reader gave it.
func renameMessage(m *loom.Message, old string) {
	for j := range m.Parts {
		if rest, ok := strings.CutPrefix(m.Parts[j].ID, m.ID); ok {
			m.Parts[j].ID = old + rest
		}
	}
	m.ID = old
}
