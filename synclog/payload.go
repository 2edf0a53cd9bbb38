package synclog

import (
	"errors"
	"fmt"
	"time"

	"github.com/loomhq/loom"
)

// Type says what a payload is. The numbers are part of the format: a
// type, once written, keeps its number for good.
type Type uint8

// The payload types, one for each change a store makes.
const (
	TypeSessionCreated   Type = 1
	TypeSessionChanged   Type = 2
	TypeMessagesAppended Type = 3
	TypePartUpdated      Type = 4
	TypeUsageUpdated     Type = 5
	TypeForked           Type = 6
	TypeRewound          Type = 7
	TypeTrashed          Type = 8
	TypeRestored         Type = 9
	TypePurged           Type = 10
	TypeImported         Type = 11
)

var typeNames = [...]string{
	TypeSessionCreated:   "session_created",
	TypeSessionChanged:   "session_changed",
	TypeMessagesAppended: "messages_appended",
	TypePartUpdated:      "part_updated",
	TypeUsageUpdated:     "usage_updated",
	TypeForked:           "forked",
	TypeRewound:          "rewound",
	TypeTrashed:          "trashed",
	TypeRestored:         "restored",
	TypePurged:           "purged",
	TypeImported:         "imported",
}

// String returns the type's name, or "type N" for one this loom does not
// know.
func (t Type) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return fmt.Sprintf("type %d", uint8(t))
}

// newPayload returns an empty payload of type t, nil for a type this loom
// does not know.
func newPayload(t Type) Payload {
	switch t {
	case TypeSessionCreated:
		return new(SessionCreated)
	case TypeSessionChanged:
		return new(SessionChanged)
	case TypeMessagesAppended:
		return new(MessagesAppended)
	case TypePartUpdated:
		return new(PartUpdated)
	case TypeUsageUpdated:
		return new(UsageUpdated)
	case TypeForked:
		return new(Forked)
	case TypeRewound:
		return new(Rewound)
	case TypeTrashed:
		return new(Trashed)
	case TypeRestored:
		return new(Restored)
	case TypePurged:
		return new(Purged)
	case TypeImported:
		return new(Imported)
	}
	return nil
}

// Payload is the sealed part of a record: one change a store made, all
// of whose parts are stamped with the record's header (Header.Stamp).
// The types are the structs of this file, each behind a pointer.
type Payload interface {
	// Type returns the payload's type, which Encode writes before it.
	Type() Type
	// Validate checks what every host relies on when it applies the
	// record: ids that are ids, seq numbers that follow each other,
	// messages and parts the store would take. Encode and Decode call it.
	Validate() error
}

// ErrInvalid reports a payload that breaks the rules of its type.
var ErrInvalid = errors.New("invalid sync record")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// SessionCreated records a new session as its row was when its first
// append created it; the messages follow in a MessagesAppended record.
// Its counters, usage, lock and trash time are not part of it: every host
// counts its own.
type SessionCreated struct {
	Session *loom.Session `json:"session"`
}

// SessionChanged records a change of a session's metadata: only the
// fields it sets (non-nil) changed, each to the value given. Each field
// merges on its own (see Meta).
type SessionChanged struct {
	SessionID   string  `json:"session_id"`
	Title       *string `json:"title,omitempty"`
	Description *string `json:"description,omitempty"`
	// Key "" removes the session's key.
	Key       *string       `json:"key,omitempty"`
	Project   *loom.Project `json:"project,omitempty"`
	Cwd       *string       `json:"cwd,omitempty"`
	Model     *string       `json:"model,omitempty"`
	Provider  *string       `json:"provider,omitempty"`
	Profile   *string       `json:"profile,omitempty"`
	GitBranch *string       `json:"git_branch,omitempty"`
	Archive   *Archive      `json:"archive,omitempty"`
	// At is the session's updated_at after the change, nil for a change
	// that is not activity (archiving, or SessionUpdate.KeepUpdatedAt).
	At *time.Time `json:"at,omitempty"`
}

// Archive is a session's archived state: archived since At, or not
// archived when At is nil.
type Archive struct {
	At *time.Time `json:"at"`
}

// MessagesAppended records messages appended to a session, in one
// transaction. FirstSeq and PrevID say where the writer appended them: after
// the message PrevID, which had seq FirstSeq-1 (PrevID is "" when
// FirstSeq is 1). That is how two hosts that appended to the same
// session at once are told apart (PlanAppend).
type MessagesAppended struct {
	SessionID string `json:"session_id"`
	FirstSeq  int64  `json:"first_seq"`
	PrevID    string `json:"prev_id,omitempty"`
	// Messages are stored as they are: ids, seq (FirstSeq, FirstSeq+1
	// …), times, parts, usage.
	Messages []*loom.Message `json:"messages"`
	// At is the time the writer's append took as now (loom.Session.
	// ApplyAppend): applying the record with the same now gives the
	// session the same updated_at.
	At time.Time `json:"at"`
}

// PartUpdated records a part of a stored message replaced or added
// (Store.UpdatePart): a tool part that finished, or a part an import
// added. MessageID is the id of the message at Seq, which tells where the
// message went if a conflict moved it to a fork.
type PartUpdated struct {
	SessionID string    `json:"session_id"`
	Seq       int64     `json:"seq"`
	MessageID string    `json:"message_id"`
	Part      loom.Part `json:"part"`
}

// UsageUpdated records the usage of a stored message set
// (Store.UpdateUsage).
type UsageUpdated struct {
	SessionID string     `json:"session_id"`
	Seq       int64      `json:"seq"`
	MessageID string     `json:"message_id"`
	Usage     loom.Usage `json:"usage"`
}

// Forked records a fork (Store.Fork). Session is the new session's row as
// created: its id, kind fork, parent, fork turn, key, title and the
// metadata it took from its parent then, so that every host makes the
// same row whatever it has applied of the parent since. The fork holds
// the parent's messages 1 to LastSeq, the last of which is LastID.
type Forked struct {
	Session *loom.Session `json:"session"`
	LastSeq int64         `json:"last_seq"`
	LastID  string        `json:"last_id,omitempty"`
}

// Rewound records a rewind (Store.Rewind): session SessionID keeps its
// messages 1 to KeepSeq (the last being KeepID, the end of turn Turn),
// and every message after moves to the new fork Fork (its row as
// created). Store is where the session stores its next messages, as the
// writer's store chose it.
type Rewound struct {
	SessionID string        `json:"session_id"`
	Turn      int           `json:"turn"`
	KeepSeq   int64         `json:"keep_seq"`
	KeepID    string        `json:"keep_id"`
	Fork      *loom.Session `json:"fork"`
	Store     string        `json:"store"`
	// At is the session's updated_at after the rewind.
	At time.Time `json:"at"`
}

// Trashed records sessions moved to the trash (Store.Delete without
// Purge): the session and its sub-agent sessions, at At. Seen is what the
// writer had applied of every host's log: work it had not seen keeps a
// session out of the trash (Life.DeletedAt).
type Trashed struct {
	SessionIDs []string  `json:"session_ids"`
	At         time.Time `json:"at"`
	Seen       Vector    `json:"seen"`
}

// Restored records sessions brought back from the trash (Store.Restore).
type Restored struct {
	SessionIDs []string `json:"session_ids"`
}

// Purged records sessions removed for good (Store.Delete with Purge,
// Store.Prune, and trash purged when its time is up). Seen is what the
// writer had applied of every host's log (see Rescue).
type Purged struct {
	SessionIDs []string `json:"session_ids"`
	Seen       Vector   `json:"seen"`
}

// Imported records whole sessions written at once (Store.Import), with
// their messages as they are.
type Imported struct {
	Sessions []*loom.SessionData `json:"sessions"`
}

// Type implements Payload.
func (*SessionCreated) Type() Type { return TypeSessionCreated }

// Type implements Payload.
func (*SessionChanged) Type() Type { return TypeSessionChanged }

// Type implements Payload.
func (*MessagesAppended) Type() Type { return TypeMessagesAppended }

// Type implements Payload.
func (*PartUpdated) Type() Type { return TypePartUpdated }

// Type implements Payload.
func (*UsageUpdated) Type() Type { return TypeUsageUpdated }

// Type implements Payload.
func (*Forked) Type() Type { return TypeForked }

// Type implements Payload.
func (*Rewound) Type() Type { return TypeRewound }

// Type implements Payload.
func (*Trashed) Type() Type { return TypeTrashed }

// Type implements Payload.
func (*Restored) Type() Type { return TypeRestored }

// Type implements Payload.
func (*Purged) Type() Type { return TypePurged }

// Type implements Payload.
func (*Imported) Type() Type { return TypeImported }

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
