package sessionstore

import (
	"crypto/sha256"
	"encoding/binary"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// TrashMark is a trash record as a session keeps it: its stamp, the
// session's deleted_at, and what its writer had seen.
type TrashMark struct {
	Stamp synclog.Stamp
	At    time.Time
	Seen  synclog.Vector
}

// Life is whether a session is in the trash, as merged from records:
// the latest trash, the latest restore, and the work the session holds.
// Every part only grows (a later stamp, a higher index), so any order of
// the same records gives the same Life.
type Life struct {
	// Trash is the trash record with the latest stamp, nil if none.
	Trash *TrashMark
	// Restore is the stamp of the latest restore record, zero if none.
	Restore synclog.Stamp
	// Work is, for every host, the highest index of its records whose
	// work the session holds: appends, part and usage updates, rewinds.
	// A store keeps it per session, and recomputes it from what a
	// session keeps when a conflict moves messages out of it.
	Work synclog.Vector
	// Touched is, for every host, the highest index of its records that
	// restored the session or changed its metadata (a rename, an
	// archive …): besides the work, what a purge must have seen of the
	// host for the host to let the session go without a copy (Rescue).
	Touched synclog.Vector `json:",omitempty"`
	// Made is the record that made the session as a fork or a rewind's
	// fork, nil for one no record made so (kept from before, or made
	// otherwise): a purge of the session it was made from that had not
	// seen it takes it too (Unseen).
	Made *Made `json:",omitempty"`
}

// Made names a record: its host and index.
type Made struct {
	Host  synclog.HostID
	Index int64
}

// MadeBy keeps that record index of host h made the session.
func (l *Life) MadeBy(h synclog.HostID, index int64) {
	l.Made = &Made{Host: h, Index: index}
}

// Unseen reports whether the session is one purge p had not seen made:
// a fork, made of a session p purges, that goes with it. On a host that
// applies the fork's record after the purge, the record is dropped (its
// parent is purged); so the fork goes on every host, whatever the order,
// and its maker saves a copy (Rescue).
func (l *Life) Unseen(p *synclog.Purged) bool {
	return l.Made != nil && !p.Seen.Saw(l.Made.Host, l.Made.Index)
}

// Trashed merges trash record p, stamped s, into l.
func (l *Life) Trashed(s synclog.Stamp, p *synclog.Trashed) {
	if l.Trash == nil || l.Trash.Stamp.Less(s) {
		l.Trash = &TrashMark{Stamp: s, At: p.At, Seen: p.Seen}
	}
}

// Restored merges a restore record stamped s into l.
func (l *Life) Restored(s synclog.Stamp) {
	if l.Restore.Less(s) {
		l.Restore = s
	}
}

// Worked merges record index of host h, which did work in the session,
// into l.
func (l *Life) Worked(h synclog.HostID, index int64) {
	if l.Work == nil {
		l.Work = synclog.Vector{}
	}
	l.Work[h] = max(l.Work[h], index)
}

// Touch merges record index of host h, which restored the session or
// changed its metadata, into l.
func (l *Life) Touch(h synclog.HostID, index int64) {
	if l.Touched == nil {
		l.Touched = synclog.Vector{}
	}
	l.Touched[h] = max(l.Touched[h], index)
}

// DeletedAt returns when the session went to the trash, nil when it is
// not there. It is in the trash when its latest trash is later than its
// latest restore and its writer had seen all the work the session holds.
// Work the trashing host had not seen, done meanwhile on another machine,
// keeps the session out of the trash: someone was still using it, and
// nothing a user did goes to the trash without that user having seen it.
// A trash that saw everything wins, even over work stamped later by a
// clock that runs ahead.
func (l *Life) DeletedAt() *time.Time {
	if l.Trash == nil || !l.Restore.Less(l.Trash.Stamp) || !l.Trash.Seen.SawAll(l.Work) {
		return nil
	}
	at := l.Trash.At
	return &at
}

// Rescue reports whether host self, about to apply purge p to a session
// whose life here is l, must first save a copy of the session under a
// new id (recoveredTitle): when the session holds work of self's, or a
// restore, rename, archive or other change of self's, that p's writer
// had not seen. A purge is final everywhere (the session's rows go, and
// records for it that arrive later are dropped), so what was done on
// one machine while another purged the session would otherwise be lost:
// a turn, or a session brought back from the trash, renamed or archived
// to be kept. Only its own doing makes a host save a copy, so one copy
// is made for each host whose doing it is.
func Rescue(p *synclog.Purged, self synclog.HostID, l Life) bool {
	if l.Unseen(p) && l.Made.Host == self {
		return true
	}
	return !p.Seen.Saw(self, max(l.Work[self], l.Touched[self]))
}

// recoveredTitle returns the title of the copy Rescue saves of a session
// titled t.
func recoveredTitle(t string) string {
	if t == "" {
		return ""
	}
	return t + " (recovered)"
}

// rescueID returns the id of the copy that host saves of session id
// before purge, the purge record stamped purge, applies (Rescue). The
// purge's writer, applying that host's work in the session after its
// purge, saves the same copy under the same id (PurgeKept), so that the
// two are one session on every host, whichever made it first. It is a
// UUIDv7 whose time is the purge's.
func rescueID(purge synclog.Stamp, id string, host synclog.HostID) string {
	return rescueHash(purge, "loom rescued copy\x00", id, string(host))
}

// rescuedMessageID returns the id of message id in the copy copyID of a
// session purge purged (rescueID): the same wherever the copy is made.
func rescuedMessageID(purge synclog.Stamp, copyID, id string) string {
	return rescueHash(purge, "loom rescued message\x00", copyID, id)
}

// rescueHash is a UUIDv7 of purge's time whose other bits are SHA-256 of
// what, the purge's stamp and parts.
func rescueHash(purge synclog.Stamp, what string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte(what))
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(purge.HLC)))
	h.Write([]byte(purge.Host))
	for _, x := range parts {
		h.Write([]byte{0})
		h.Write([]byte(x))
	}
	return loom.IDFromHash(purge.HLC.WallMS(), h.Sum(nil))
}

// PurgeKept is a purge of a session, as a store keeps it for the work
// the purge had not seen that arrives after it (rescueUnseen): the
// purge's stamp and what its writer had seen, and for a purge made here,
// its index in this store's log and what it took, the session's row and
// messages as they were (Data). A store keeps Data until the sync that
// sends the purge has pulled (Replica.SyncForgetPurged): another host's
// work in the session that the purge had not seen, which that pull may
// bring, makes the store save the copy that host saves when it applies
// the purge (rescueID), without waiting for the copy to come from it.
type PurgeKept struct {
	Stamp synclog.Stamp
	Index int64 `json:",omitempty"`
	Seen  synclog.Vector
	Data  *loom.SessionData `json:",omitempty"`
}
