package session

import (
	"context"
	"strconv"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// heldOutcome is what an import does with the sessions the store holds
// already.
type heldOutcome struct {
	// Same counts the sessions held already with the same messages:
	// left out.
	Same int
	// Copies counts the sessions held already with other messages:
	// imported beside them as new sessions.
	Copies int
}

// settleHeld sorts the sessions of an import against st, so that
// importing an export twice, or one that overlaps what sync or an
// earlier import brought, never fails: a session the store holds with
// the same messages (the same ids, in order) is left out; one it holds
// with other messages (it went on on one side), or that is another
// user's, comes in beside it as a new session, titled "T (imported)",
// with new ids for it and its messages, and its sub-agent sessions and
// forks in the import follow it. It returns what is left to import.
func settleHeld(ctx context.Context, st loom.Store, user string, all []*loom.SessionData) ([]*loom.SessionData, heldOutcome, error) {
	var out heldOutcome
	var keep []*loom.SessionData
	renamed := map[string]string{}  // session id → its new id
	messages := map[string]string{} // message id → its new id, in renamed sessions
	for _, d := range all {
		s := d.Session
		if to, ok := renamed[s.ParentID]; ok {
			// The parent came in as a copy: so does its family here.
			copyAs(user, d, copyID(user, s, to), to, renamed, messages, false)
			keep = append(keep, d)
			continue
		}
		held, err := heldAs(ctx, st, user, s.ID, d.Messages, nil)
		if err != nil {
			return nil, out, err
		}
		if held == heldSame {
			out.Same++
			continue
		}
		if held == heldNot {
			keep = append(keep, d)
			continue
		}
		// Held with other messages: as a copy, unless that copy is
		// held already (this import made before).
		id := copyID(user, s, "")
		if again, err := heldAs(ctx, st, user, id, d.Messages, func(m *loom.Message) string { return copyMessageID(user, id, m) }); err != nil {
			return nil, out, err
		} else if again == heldSame {
			out.Same++
			continue
		}
		copyAs(user, d, id, "", renamed, messages, true)
		out.Copies++
		keep = append(keep, d)
	}
	return keep, out, nil
}

// How the store holds a session an import brings.
const (
	heldNot   = iota // not at all
	heldSame         // with every message the import has
	heldOther        // with other messages, or another user's
)

// heldAs says how st holds session id, which an import brings with msgs
// (under the ids idOf gives them, when not nil).
func heldAs(ctx context.Context, st loom.Store, user, id string, msgs []*loom.Message, idOf func(*loom.Message) string) (int, error) {
	held, err := st.Session(ctx, id)
	if loom.ErrorCode(err) == loom.ENOTFOUND {
		return heldNot, nil
	}
	if err != nil {
		return heldNot, err
	}
	if held.UserID != user {
		return heldOther, nil
	}
	same, err := sameMessages(ctx, st, held, msgs, idOf)
	if err != nil || !same {
		return heldOther, err
	}
	return heldSame, nil
}

// copyID is the id of the copy an import makes of session s (of its
// family whose head's copy is parent, when not ""): derived from s's id
// and its last message's (importer.SessionID), so that the same import
// again finds the copy it made.
func copyID(user string, s *loom.Session, parent string) string {
	return importer.SessionID(user, "import-copy:"+s.ID+"@"+parent+"@"+s.LastPrompt+"@"+strconv.Itoa(s.MessageCount), s.CreatedAt)
}

// copyMessageID is the id message m has in copy id of its session.
func copyMessageID(user, id string, m *loom.Message) string {
	return importer.SessionID(user, "import-copy-message:"+id+"/"+m.ID, m.CreatedAt)
}

// copyAs gives session d id (and a title saying it is a copy, when
// title) and its messages ids derived from id and theirs, keeping the
// ones given before to messages it shares with a renamed parent; parent,
// when not "", is its parent's new id.
func copyAs(user string, d *loom.SessionData, id, parent string, renamed, messages map[string]string, title bool) {
	s := d.Session
	renamed[s.ID] = id
	s.ID = id
	if parent != "" {
		s.ParentID = parent
	}
	if title && s.Title != "" {
		s.Title += " (imported)"
	}
	s.Key = "" // the held session keeps its key
	for _, m := range d.Messages {
		to, ok := messages[m.ID]
		if !ok {
			to = copyMessageID(user, id, m)
			messages[m.ID] = to
		}
		m.ID, m.SessionID = to, id
	}
}

// sameMessages reports whether held holds msgs already: its messages
// start with them (the same ids at the same seqs; the first and the last
// of msgs are compared, ids being unique), so the import brings nothing
// it lacks.
func sameMessages(ctx context.Context, st loom.Store, held *loom.Session, msgs []*loom.Message, idOf func(*loom.Message) string) (bool, error) {
	if idOf == nil {
		idOf = func(m *loom.Message) string { return m.ID }
	}
	n := len(msgs)
	if held.MessageCount < n {
		return false, nil
	}
	if n == 0 {
		return true, nil
	}
	for _, seq := range []int64{1, int64(n)} {
		have, err := st.Messages(ctx, held.ID, loom.MessageQuery{After: seq - 1, Limit: 1, Oldest: true})
		if err != nil {
			return false, err
		}
		if len(have) != 1 || have[0].ID != idOf(msgs[seq-1]) {
			return false, nil
		}
	}
	return true, nil
}
