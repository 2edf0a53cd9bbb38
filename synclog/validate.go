package synclog

import "github.com/loomhq/loom"

// The rules each payload type keeps (Payload.Validate), which Encode and
// Decode check.

// Validate implements Payload.
func (p *SessionCreated) Validate() error { return validRow(p.Session, "session") }

// Validate implements Payload.
func (p *SessionChanged) Validate() error {
	if err := validID(p.SessionID, "session"); err != nil {
		return err
	}
	u := p.update()
	if u == (loom.SessionUpdate{}) {
		return invalid("session %s: a change that changes nothing", p.SessionID)
	}
	if err := u.Validate(); err != nil {
		return invalid("session %s: %s", p.SessionID, loom.ErrorMessage(err))
	}
	return nil
}

// update returns the change as the store's SessionUpdate, the archive
// state aside.
func (p *SessionChanged) update() loom.SessionUpdate {
	u := loom.SessionUpdate{Title: p.Title, Description: p.Description, Key: p.Key, Project: p.Project,
		Cwd: p.Cwd, Model: p.Model, Provider: p.Provider, Profile: p.Profile, GitBranch: p.GitBranch}
	if p.Archive != nil {
		archived := p.Archive.At != nil
		u.Archived = &archived
	}
	return u
}

// Validate implements Payload.
func (p *MessagesAppended) Validate() error {
	if err := validID(p.SessionID, "session"); err != nil {
		return err
	}
	switch {
	case p.FirstSeq < 1:
		return invalid("session %s: first seq %d (seq starts at 1)", p.SessionID, p.FirstSeq)
	case p.FirstSeq == 1 && p.PrevID != "":
		return invalid("session %s: the first message follows %q", p.SessionID, p.PrevID)
	case p.FirstSeq > 1 && p.PrevID == "":
		return invalid("session %s: message %d follows no message", p.SessionID, p.FirstSeq)
	case len(p.Messages) == 0:
		return invalid("session %s: an append of no messages", p.SessionID)
	case p.At.IsZero():
		return invalid("session %s: an append at no time", p.SessionID)
	}
	return validMessages(p.SessionID, p.FirstSeq, p.Messages)
}

// Validate implements Payload.
func (p *PartUpdated) Validate() error {
	if err := validAnchor(p.SessionID, p.Seq, p.MessageID); err != nil {
		return err
	}
	return validPart(p.SessionID, p.Seq, &p.Part)
}

// Validate implements Payload.
func (p *UsageUpdated) Validate() error { return validAnchor(p.SessionID, p.Seq, p.MessageID) }

// Validate implements Payload.
func (p *Forked) Validate() error {
	if err := validRow(p.Session, "fork"); err != nil {
		return err
	}
	s := p.Session
	switch {
	case s.Kind != loom.KindFork:
		return invalid("fork %s: kind %q", s.ID, s.Kind)
	case s.ParentID == "":
		return invalid("fork %s: no parent", s.ID)
	case p.LastSeq < 0:
		return invalid("fork %s: last seq %d", s.ID, p.LastSeq)
	case (p.LastSeq == 0) != (p.LastID == ""):
		return invalid("fork %s: last seq %d with last message %q", s.ID, p.LastSeq, p.LastID)
	}
	return nil
}

// Validate implements Payload.
func (p *Rewound) Validate() error {
	if err := validAnchor(p.SessionID, p.KeepSeq, p.KeepID); err != nil {
		return err
	}
	if err := validRow(p.Fork, "rewind fork"); err != nil {
		return err
	}
	switch {
	case p.Turn < 1:
		return invalid("session %s: rewind to turn %d", p.SessionID, p.Turn)
	case p.Fork.Kind != loom.KindFork || p.Fork.ParentID != p.SessionID:
		return invalid("session %s: rewind fork %s is not a fork of it", p.SessionID, p.Fork.ID)
	case p.Fork.ID == p.SessionID:
		return invalid("session %s: rewinds into itself", p.SessionID)
	case p.At.IsZero():
		return invalid("session %s: a rewind at no time", p.SessionID)
	}
	return validID(p.Store, "store")
}

// Validate implements Payload.
func (p *Trashed) Validate() error {
	if p.At.IsZero() {
		return invalid("trash at no time")
	}
	return validIDs(p.SessionIDs, p.Seen)
}

// Validate implements Payload.
func (p *Restored) Validate() error { return validIDs(p.SessionIDs, nil) }

// Validate implements Payload.
func (p *Purged) Validate() error { return validIDs(p.SessionIDs, p.Seen) }

// Validate implements Payload.
func (p *Imported) Validate() error {
	if len(p.Sessions) == 0 {
		return invalid("an import of no sessions")
	}
	seen := make(map[string]bool, len(p.Sessions))
	for _, d := range p.Sessions {
		if d == nil {
			return invalid("an imported session is empty")
		}
		if err := validRow(d.Session, "imported session"); err != nil {
			return err
		}
		if seen[d.Session.ID] {
			return invalid("session %s imported twice", d.Session.ID)
		}
		seen[d.Session.ID] = true
		if err := validMessages(d.Session.ID, 1, d.Messages); err != nil {
			return err
		}
	}
	return nil
}

func validID(id, what string) error {
	if loom.ValidID(id) != nil {
		return invalid("%s id %q is not a UUID", what, id)
	}
	return nil
}

// validAnchor checks a reference to message id at seq of a session.
func validAnchor(session string, seq int64, id string) error {
	if err := validID(session, "session"); err != nil {
		return err
	}
	if seq < 1 {
		return invalid("session %s: message seq %d", session, seq)
	}
	if loom.ValidForeignID(id) != nil {
		return invalid("session %s: message %d has id %q", session, seq, id)
	}
	return nil
}

func validIDs(ids []string, seen Vector) error {
	if len(ids) == 0 {
		return invalid("no sessions named")
	}
	for _, id := range ids {
		if err := validID(id, "session"); err != nil {
			return err
		}
	}
	for h := range seen {
		if err := h.Validate(); err != nil {
			return invalid("seen: %s", err)
		}
	}
	return nil
}

// validRow checks a session row a record creates.
func validRow(s *loom.Session, what string) error {
	if s == nil {
		return invalid("no %s", what)
	}
	if err := validID(s.ID, what); err != nil {
		return err
	}
	if s.ParentID != "" {
		if err := validID(s.ParentID, what+" "+s.ID+" parent"); err != nil {
			return err
		}
	}
	switch s.Kind {
	case loom.KindMain, loom.KindFork, loom.KindSubagent:
	default:
		return invalid("%s %s: kind %q", what, s.ID, s.Kind)
	}
	if s.Kind != loom.KindMain && s.ParentID == "" {
		return invalid("%s %s: a %s without a parent", what, s.ID, s.Kind)
	}
	if s.Key != "" && loom.ValidKey(s.Key) != nil {
		return invalid("%s %s: key %q", what, s.ID, s.Key)
	}
	if s.CreatedAt.IsZero() {
		return invalid("%s %s: no created_at", what, s.ID)
	}
	return nil
}

// validMessages checks messages stored from seq first on in a session.
func validMessages(session string, first int64, msgs []*loom.Message) error {
	for i, m := range msgs {
		seq := first + int64(i)
		if m == nil {
			return invalid("session %s: message %d is empty", session, seq)
		}
		if m.Seq != seq {
			return invalid("session %s: message %d has seq %d", session, seq, m.Seq)
		}
		if m.SessionID != "" && m.SessionID != session {
			return invalid("session %s: message %d is session %s's", session, seq, m.SessionID)
		}
		if loom.ValidForeignID(m.ID) != nil {
			return invalid("session %s: message %d has id %q", session, seq, m.ID)
		}
		if m.CreatedAt.IsZero() {
			return invalid("session %s: message %d has no created_at", session, seq)
		}
		if err := m.Validate(); err != nil {
			return invalid("session %s: message %d: %s", session, seq, loom.ErrorMessage(err))
		}
		for j := range m.Parts {
			if loom.ValidForeignID(m.Parts[j].ID) != nil {
				return invalid("session %s: message %d: part %d has id %q", session, seq, j+1, m.Parts[j].ID)
			}
		}
	}
	return nil
}

func validPart(session string, seq int64, p *loom.Part) error {
	if loom.ValidForeignID(p.ID) != nil {
		return invalid("session %s: message %d: part id %q", session, seq, p.ID)
	}
	if err := p.Validate(); err != nil {
		return invalid("session %s: message %d: %s", session, seq, loom.ErrorMessage(err))
	}
	return nil
}
