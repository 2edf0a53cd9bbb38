package codex

import (
	"encoding/json"
	"hash/maphash"
	"strings"

	"github.com/loomhq/loom/importer"
)

// scan is the first pass over one record.
func (rd *reader) scan(rc *rec) {
	rd.lastLine = rc.n
	switch rc.typ {
	case "session_meta":
		if rd.meta == nil && rd.headLost && rd.copied == nil {
			// The first line, the session's own session_meta, is lost:
			// this is the parent's, first in the copy of its history.
			var m sessionMeta
			if json.Unmarshal(rc.payload, &m) == nil {
				rd.copied, rd.replayStart = &m, rc.n
				if t, ok := uuidTime(fileID(rd.path)); ok {
					rd.forkAt = t
				} else {
					rd.forkAt = rc.t
				}
			}
			return
		}
		if rd.meta == nil && !rd.headLost {
			var m sessionMeta
			if json.Unmarshal(rc.payload, &m) == nil {
				rd.meta, rd.metaLine = &m, rc.n
				if t, ok := uuidTime(m.ID); ok {
					rd.forkAt = t
				} else if t := importer.RFC3339Time(m.Timestamp); !t.IsZero() {
					rd.forkAt = t
				} else {
					rd.forkAt = rc.t
				}
			}
			return
		}
		if rd.replayStart == 0 {
			rd.replayStart = rc.n
		}
		return
	case "turn_context", "compacted":
		rd.settled = rc.n
	case "event_msg":
		var ev struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(rc.payload, &ev) == nil && turnEvents[ev.Type] {
			rd.settled = rc.n
		}
	case "response_item":
		var it responseItem
		if json.Unmarshal(rc.payload, &it) != nil {
			return
		}
		if it.Type != "reasoning" {
			rd.settled = rc.n
		}
		switch it.Type {
		case "message":
			kind := "a"
			if it.Role != "assistant" {
				kind = "u"
			}
			rd.dups[rd.key(kind, messageText(it.Content))]++
		case "reasoning":
			for _, c := range items(it.Summary) {
				rd.dups[rd.key("r", c.Text)]++
			}
			for _, c := range items(it.Content) {
				rd.dups[rd.key("rr", c.Text)]++
			}
		}
	}
	if rd.replayStart == 0 || rc.n <= rd.replayStart || rd.turnEnd != 0 {
		return
	}
	// Inside a copy of a parent's history: its turns began before the
	// fork was made, the fork's own turns after.
	if id := turnID(rc); id != "" {
		if t, ok := uuidTime(id); ok {
			rd.sawTurnID = true
			if !t.Before(rd.forkAt) {
				rd.turnEnd = rc.n
			}
		}
	}
	if rd.timeEnd == 0 && !rc.t.IsZero() && !rd.forkAt.IsZero() && !rc.t.Before(rd.forkAt) {
		rd.timeEnd = rc.n
	}
}

// turnEvents are the events that begin or end a turn, or send its
// prompt: after one, the model call before it has written all its
// response items.
var turnEvents = map[string]bool{
	"user_message": true, "task_started": true, "turn_started": true,
	"task_complete": true, "turn_complete": true, "turn_aborted": true,
}

// pendingEvent reports whether an event at line n whose text no response
// item of the reading holds may still be repeated by one the agent has
// not written yet: nothing but reasoning items and events of the same
// model call (its token count) follows it in the reading, no other
// response item, turn context, nor turn's start or end. Codex 0.39 writes an agent_message (agent_reasoning)
// event before the response item that repeats it; a reading that ends
// between them holds the event back, as a reading of the whole file
// leaves it out, so that the reply starts at the same line whatever
// line a reading stopped at.
func (rd *reader) pendingEvent(n int) bool {
	return n > rd.settled
}

// turnID returns the turn id a turn_context or turn-start event carries.
func turnID(rc *rec) string {
	switch rc.typ {
	case "turn_context":
		var tc turnContext
		if json.Unmarshal(rc.payload, &tc) == nil {
			return tc.TurnID
		}
	case "event_msg":
		var ev struct {
			Type   string          `json:"type"`
			TurnID json.RawMessage `json:"turn_id"`
		}
		if json.Unmarshal(rc.payload, &ev) == nil && (ev.Type == "task_started" || ev.Type == "turn_started") {
			return str(ev.TurnID)
		}
	}
	return ""
}

// endScan decides where a fork's copy of its parent's history ends: at
// the first turn whose id was made after the fork; failing turn ids, at
// the first line stamped after the fork. When neither tells, nothing is
// taken as copied.
func (rd *reader) endScan(recs []rec) {
	if rd.replayStart == 0 {
		return
	}
	switch {
	case rd.turnEnd != 0:
		rd.forkEnd = rd.turnEnd
	case rd.sawTurnID:
		rd.forkEnd = rd.lastLine + 1
	case rd.timeEnd != 0:
		rd.forkEnd = rd.timeEnd
	default:
		rd.forkEnd = rd.replayStart
	}
}

// inherited reports whether line n belongs to a fork's copy of its
// parent's history.
func (rd *reader) inherited(n int) bool {
	return rd.replayStart != 0 && n >= rd.replayStart && n < rd.forkEnd
}

// key hashes a text of kind for matching events with response items,
// ignoring differences of white space. A user message's IDE context,
// which its event may leave out, is ignored too.
func (rd *reader) key(kind, text string) uint64 {
	if kind == "u" {
		if _, after, ok := strings.Cut(text, userMessageBegin); ok {
			text = after
		}
	}
	var h maphash.Hash
	h.SetSeed(rd.seed)
	h.WriteString(kind)
	h.WriteByte(':')
	first := true
	for f := range strings.FieldsSeq(text) {
		if !first {
			h.WriteByte(' ')
		}
		first = false
		h.WriteString(f)
	}
	return h.Sum64()
}

// duplicate reports whether an event's text repeats a response item's,
// and consumes that item's count when it does.
func (rd *reader) duplicate(kind, text string) bool {
	k := rd.key(kind, text)
	if rd.dups[k] > 0 {
		rd.dups[k]--
		return true
	}
	return false
}
