package synclog

import "time"

// TrashMark is a trash record as a session keeps it: its stamp, the
// session's deleted_at, and what its writer had seen.
type TrashMark struct {
	Stamp Stamp
	At    time.Time
	Seen  Vector
}

// Life is whether a session is in the trash, as merged from records:
// the latest trash, the latest restore, and the work the session holds.
// Every part only grows (a later stamp, a higher index), so any order of
// the same records gives the same Life.
type Life struct {
	// Trash is the trash record with the latest stamp, nil if none.
	Trash *TrashMark
	// Restore is the stamp of the latest restore record, zero if none.
	Restore Stamp
	// Work is, for every host, the highest index of its records whose
	// work the session holds: appends, part and usage updates, rewinds.
	// A store keeps it per session, and recomputes it from what a
	// session keeps when a conflict moves messages out of it.
	Work Vector
}

// Trashed merges trash record p, stamped s, into l.
func (l *Life) Trashed(s Stamp, p *Trashed) {
	if l.Trash == nil || l.Trash.Stamp.Less(s) {
		l.Trash = &TrashMark{Stamp: s, At: p.At, Seen: p.Seen}
	}
}

// Restored merges a restore record stamped s into l.
func (l *Life) Restored(s Stamp) {
	if l.Restore.Less(s) {
		l.Restore = s
	}
}

// Worked merges record index of host h, which did work in the session,
// into l.
func (l *Life) Worked(h HostID, index int64) {
	if l.Work == nil {
		l.Work = Vector{}
	}
	l.Work[h] = max(l.Work[h], index)
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
// whose work is work, must first save a copy of the session under a new
// id (RecoveredTitle): when the session holds work of self's that p's
// writer had not seen. A purge is final everywhere (the session's rows
// go, and records for it that arrive later are dropped), so work done
// on one machine while another purged the session would otherwise be
// lost; only its own work makes a host save a copy, so one copy is made
// for each host whose work it is.
func Rescue(p *Purged, self HostID, work Vector) bool {
	return !p.Seen.Saw(self, work[self])
}

// RecoveredTitle returns the title of the copy Rescue saves of a session
// titled t.
func RecoveredTitle(t string) string {
	if t == "" {
		return ""
	}
	return t + " (recovered)"
}
