package sessionstore

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// Entry is a stored message as PlanAppend sees it: its id and the stamp
// of the record that appended it. A store keeps the stamp beside each
// message it stores.
type Entry struct {
	ID    string
	Stamp synclog.Stamp
}

// AppendWindow is what PlanAppend reads of the session an append record goes
// to: a few rows around where the record appends, whatever the session's
// length.
type AppendWindow struct {
	// Count is how many messages the session holds.
	Count int64
	// Prev is the id of the session's message at the record's FirstSeq-1,
	// "" when the session holds fewer messages or FirstSeq is 1.
	Prev string
	// Next are the session's messages from the record's FirstSeq on, as
	// many as the record has (fewer when the session ends before).
	Next []Entry
}

// Action is what to do with an append record.
type Action int

// The actions of PlanAppend.
const (
	// appendAfter: store the record's messages from Skip on, at seq
	// FirstSeq+Skip. Skip > 0 when the session holds the first Skip
	// already.
	appendAfter Action = iota + 1
	// Applied: the session holds every message of the record already.
	Applied
	// Elsewhere: the session does not hold the message the record
	// follows at FirstSeq-1. Either a rewind or a conflict moved it to a
	// fork (plan again on the nearest session the session's messages
	// moved to that holds it: see docs/sync.md), or the record that
	// appended it has not arrived yet (keep the record, and this host's
	// records after it, for the next pull).
	Elsewhere
	// MoveLocal: the chains diverge at seq At, and the incoming one wins.
	// Move the session's messages from At on to a new conflict fork with
	// id Fork (what Store.Rewind does at a seq), then store the record's
	// messages from Skip on at At.
	MoveLocal
	// ForkIncoming: the chains diverge at seq At, and the session's own
	// wins. The record's messages from Skip on go to the conflict fork
	// Fork, which holds the session's messages 1 to At-1 and then them. If
	// Fork exists already, plan the record again on it.
	ForkIncoming
)

var actionNames = [...]string{appendAfter: "append", Applied: "applied", Elsewhere: "elsewhere",
	MoveLocal: "move local", ForkIncoming: "fork incoming"}

// String returns the action's name.
func (a Action) String() string {
	if a > 0 && int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("action %d", int(a))
}

// Plan is PlanAppend's answer.
type Plan struct {
	Action Action
	// Skip is how many of the record's messages the session holds
	// already, the first ones.
	Skip int
	// At is the seq where the session and the record diverge (MoveLocal,
	// ForkIncoming).
	At int64
	// Fork is the id of the conflict fork (MoveLocal, ForkIncoming).
	Fork string
}

// PlanAppend says what to do with append record rec, stamped s, in the
// session whose rows around rec.FirstSeq are w.
//
// Where the session holds, from FirstSeq on, messages other than the
// record's, two hosts appended to it at once. The chain whose first
// diverging message comes first (by stamp, then id) keeps the session;
// the other continues in a conflict fork whose id is made from its first
// diverging message (conflictForkID). Every host reaches the same pair of
// sessions whatever order the records arrive in: the proof is in
// docs/sync.md.
func PlanAppend(w AppendWindow, s synclog.Stamp, rec *synclog.MessagesAppended) Plan {
	if rec.FirstSeq > 1 && (w.Count < rec.FirstSeq-1 || w.Prev != rec.PrevID) {
		return Plan{Action: Elsewhere}
	}
	for i, m := range rec.Messages {
		if i >= len(w.Next) {
			return Plan{Action: appendAfter, Skip: i}
		}
		local := w.Next[i]
		if local.ID == m.ID {
			continue
		}
		at := rec.FirstSeq + int64(i)
		if before(s, m.ID, local.Stamp, local.ID) {
			return Plan{Action: MoveLocal, Skip: i, At: at, Fork: conflictForkID(local.ID, at, local.Stamp)}
		}
		return Plan{Action: ForkIncoming, Skip: i, At: at, Fork: conflictForkID(m.ID, at, s)}
	}
	return Plan{Action: Applied, Skip: len(rec.Messages)}
}

// before reports whether message a, stamped as, comes before message b,
// stamped bs: by stamp, then by id, so the order is total even for a
// record that repeats another's stamp.
func before(as synclog.Stamp, a string, bs synclog.Stamp, b string) bool {
	if c := as.Compare(bs); c != 0 {
		return c < 0
	}
	return a < b
}

// conflictForkID returns the id of the conflict fork whose own messages
// start with message id at seq, appended by a record stamped s. It is a
// UUIDv7 whose time is the stamp's wall time (so it sorts among ids made
// then) and whose other bits come from SHA-256 of the three: every host
// makes the same id for the same fork, and no two forks share one, since
// no two messages share an id, seq and stamp. The session the message
// was first written to is left out on purpose: a later conflict may move
// the message into another session, and the fork must keep its id.
func conflictForkID(id string, seq int64, s synclog.Stamp) string {
	h := sha256.New()
	h.Write([]byte("loom conflict fork\x00"))
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(seq)))
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(s.HLC)))
	h.Write([]byte(s.Host))
	return loom.IDFromHash(s.HLC.WallMS(), h.Sum(nil))
}

// newerPart reports whether part next, written by a record stamped ns,
// replaces part cur, written at cs, when two hosts update the same part:
// the later stamp wins, except that a tool's outcome ranks above its
// progress. A result (completed, or an error of the tool's own) beats an
// "interrupted" error, which only says a host found the call unfinished,
// and either beats pending or running. So a host that resumed a session
// and marked a call interrupted does not hide the result the host running
// the tool stored a moment later.
func newerPart(cur loom.Part, cs synclog.Stamp, next loom.Part, ns synclog.Stamp) bool {
	if rc, rn := partRank(&cur), partRank(&next); rc != rn {
		return rn > rc
	}
	return cs.Less(ns)
}

func partRank(p *loom.Part) int {
	if p.Type != loom.PartTool {
		return 0
	}
	switch {
	case p.Status == loom.ToolError && p.Error == loom.Interrupted:
		return 1
	case p.Status == loom.ToolCompleted || p.Status == loom.ToolError:
		return 2
	}
	return 0
}

// importAsAppend is the append record by which a store applies imported
// session d when it holds a session with d's id already: the same source
// imported on two machines, whose id is derived from the source, so that
// each machine's copy is one session. Its messages, from seq 1, are
// planned as any append's (PlanAppend): those the session holds already
// (the same source message has the same id everywhere) are skipped, the
// ones it lacks appended, and a copy that differs from the one here (a
// source file that changed differently on each machine) continues in a
// conflict fork. At is the newest message's time, as an imported
// session's activity is its source's. Nil when d holds no messages.
func importAsAppend(d *loom.SessionData) *synclog.MessagesAppended {
	if len(d.Messages) == 0 {
		return nil
	}
	p := &synclog.MessagesAppended{SessionID: d.Session.ID, FirstSeq: 1, Messages: d.Messages, At: d.Session.UpdatedAt}
	for _, m := range d.Messages {
		if m.CreatedAt.After(p.At) {
			p.At = m.CreatedAt
		}
	}
	return p
}
