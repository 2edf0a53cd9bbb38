package loom

import "strings"

// ValidateImport checks sessions about to be imported with
// SessionData.Validate, and that no session comes twice; it sets each
// session's message counters from its messages (Recount), so that they
// agree with what is stored.
func ValidateImport(data []*SessionData) error {
	seen := make(map[string]bool, len(data))
	for i, d := range data {
		if d == nil || d.Session == nil {
			return Errorf(EINVALID, "record %d has no session", i+1)
		}
		if err := d.Validate(); err != nil {
			return err
		}
		d.Session.Recount(d.Messages)
		if seen[d.Session.ID] {
			return Errorf(EINVALID, "session %s appears twice", d.Session.ID)
		}
		seen[d.Session.ID] = true
	}
	return nil
}

// Validate checks a session about to be imported with its messages, and
// completes what may be left out: a session's kind and surface, message
// session ids and turn numbers. Every message must have an id and a
// creation time, and seq must run 1, 2, 3 … without gaps, so that an
// import stores exactly what an export wrote. These are the rules of
// every import: a reader that checks records one by one calls Validate
// on a session before its messages are added and ValidateMessage on each
// message as it is added.
//
// Ids are checked as what they may become: a session's id and its
// parent's are UUIDs (ValidID), never a path or another spelling of an
// id; so are the message ids of loom's own sessions (LoomMade). Other
// sessions' messages may keep another tool's ids (ValidForeignID), as
// may every part.
func (d *SessionData) Validate() error {
	s := d.Session
	if s == nil {
		return Errorf(EINVALID, "session record without a session")
	}
	if strings.TrimSpace(s.ID) == "" {
		return Errorf(EINVALID, "session has no id")
	}
	if ValidID(s.ID) != nil {
		return Errorf(EINVALID, "session id %q is not a UUID (loom's ids look like 0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c0d)", s.ID)
	}
	if s.ParentID != "" && ValidID(s.ParentID) != nil {
		return Errorf(EINVALID, "session %s: parent id %q is not a UUID", s.ID, s.ParentID)
	}
	if s.Key != "" {
		if err := ValidKey(s.Key); err != nil {
			return Errorf(EINVALID, "session %s: %s", s.ID, ErrorMessage(err))
		}
	}
	if s.Kind == "" {
		s.Kind = KindMain
	}
	if s.Surface == "" && s.Key != "" {
		s.Surface = SurfaceOf(s.Key)
	}
	if err := s.Validate(); err != nil {
		return Errorf(EINVALID, "session %s: %s", s.ID, ErrorMessage(err))
	}
	if s.CreatedAt.IsZero() || s.UpdatedAt.IsZero() {
		return Errorf(EINVALID, "session %s: created_at and updated_at are required", s.ID)
	}
	for i := range d.Messages {
		if err := d.ValidateMessage(i); err != nil {
			return Errorf(EINVALID, "session %s: %s", s.ID, ErrorMessage(err))
		}
	}
	return nil
}

// ValidateMessage checks message i of d, whose messages before it are
// checked already, and completes its session id and turn number. Its
// errors name the message, not the session.
func (d *SessionData) ValidateMessage(i int) error {
	s, m := d.Session, d.Messages[i]
	if m == nil {
		return Errorf(EINVALID, "message %d is empty", i+1)
	}
	if m.SessionID == "" {
		m.SessionID = s.ID
	}
	if m.SessionID != s.ID {
		return Errorf(EINVALID, "message %d belongs to session %s, but follows session %s", i+1, m.SessionID, s.ID)
	}
	if want := int64(i + 1); m.Seq != want {
		return Errorf(EINVALID, "message has seq %d, want %d (seq runs 1, 2, 3 … without gaps)", m.Seq, want)
	}
	if strings.TrimSpace(m.ID) == "" {
		return Errorf(EINVALID, "message %d has no id", m.Seq)
	}
	if d.LoomMade() {
		if ValidID(m.ID) != nil {
			return Errorf(EINVALID, "message %d has id %q, not a UUID (loom's own messages have UUIDs)", m.Seq, m.ID)
		}
	} else if err := ValidForeignID(m.ID); err != nil {
		return Errorf(EINVALID, "message %d: %s", m.Seq, ErrorMessage(err))
	}
	if m.CreatedAt.IsZero() {
		return Errorf(EINVALID, "message %d has no created_at", m.Seq)
	}
	if err := m.Validate(); err != nil {
		return Errorf(EINVALID, "message %d: %s", m.Seq, ErrorMessage(err))
	}
	for _, p := range m.Parts {
		if p.ID == "" {
			return Errorf(EINVALID, "message %d has a part without an id", m.Seq)
		}
		if err := ValidForeignID(p.ID); err != nil {
			return Errorf(EINVALID, "message %d: part %s", m.Seq, ErrorMessage(err))
		}
	}
	m.Turn = 0
	if i > 0 {
		m.Turn = d.Messages[i-1].Turn
	}
	if m.Role == RoleUser {
		m.Turn++
	}
	return nil
}

// LoomMade reports whether loom made every message of d: a main session
// that no other tool wrote (a fork or a sub-agent may hold messages
// copied from such a tool's session, with their ids).
func (d *SessionData) LoomMade() bool {
	return d.Session.Source == nil && (d.Session.Kind == "" || d.Session.Kind == KindMain)
}
