package loom

import "strings"

// ValidateImport checks sessions about to be imported, and completes what
// may be left out: message session ids, turn numbers, a session's kind and
// surface; it sets each session's message counters from its messages
// (Recount), so that they agree with what is stored. Every message must
// have an id and a creation time, and seq must run 1, 2, 3 … without
// gaps, so that an import stores exactly what an export wrote.
func ValidateImport(data []*SessionData) error {
	seen := make(map[string]bool, len(data))
	for i, d := range data {
		if d == nil || d.Session == nil {
			return Errorf(EINVALID, "record %d has no session", i+1)
		}
		s := d.Session
		if s.Kind == "" {
			s.Kind = KindMain
		}
		if s.Surface == "" && s.Key != "" {
			s.Surface = SurfaceOf(s.Key)
		}
		if err := s.Validate(); err != nil {
			return Errorf(EINVALID, "session %s: %s", s.ID, ErrorMessage(err))
		}
		if seen[s.ID] {
			return Errorf(EINVALID, "session %s appears twice", s.ID)
		}
		seen[s.ID] = true
		if s.CreatedAt.IsZero() || s.UpdatedAt.IsZero() {
			return Errorf(EINVALID, "session %s: created_at and updated_at are required", s.ID)
		}
		turn := 0
		for j, m := range d.Messages {
			if m == nil {
				return Errorf(EINVALID, "session %s: message %d is empty", s.ID, j+1)
			}
			if m.SessionID == "" {
				m.SessionID = s.ID
			}
			if m.SessionID != s.ID {
				return Errorf(EINVALID, "session %s: message %d belongs to session %s", s.ID, j+1, m.SessionID)
			}
			if m.Seq != int64(j+1) {
				return Errorf(EINVALID, "session %s: message %d has seq %d; seq must run 1, 2, 3 … without gaps", s.ID, j+1, m.Seq)
			}
			if strings.TrimSpace(m.ID) == "" {
				return Errorf(EINVALID, "session %s: message %d has no id", s.ID, m.Seq)
			}
			if m.CreatedAt.IsZero() {
				return Errorf(EINVALID, "session %s: message %d has no created_at", s.ID, m.Seq)
			}
			if err := m.Validate(); err != nil {
				return Errorf(EINVALID, "session %s: message %d: %s", s.ID, m.Seq, ErrorMessage(err))
			}
			for _, p := range m.Parts {
				if p.ID == "" {
					return Errorf(EINVALID, "session %s: message %d has a part without id", s.ID, m.Seq)
				}
			}
			if m.Role == RoleUser {
				turn++
			}
			m.Turn = turn
		}
		s.Recount(d.Messages)
	}
	return nil
}
