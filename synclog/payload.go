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
	TypeFragment:         "fragment",
	TypeRetired:          "retired",
	TypeOriginalKept:     "original_kept",
	TypeTimesSettled:     "times_settled",
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
	case TypeOriginalKept:
		return new(OriginalKept)
	case TypeTimesSettled:
		return new(TimesSettled)
	case TypeRetired:
		return new(Retired)
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

// ErrWait reports a record that follows a change its store does not
// hold yet, of another host's (a message, a session), or that would move
// a session a live process is writing: it applies later, and its host's
// records after it wait with it.
var ErrWait = errors.New("sync record waits")

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
// merges on its own (see sessionstore.Meta).
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
// session at once are told apart (sessionstore.PlanAppend).
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
// session out of the trash (sessionstore.Life.DeletedAt).
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
// writer had applied of every host's log (see sessionstore.Rescue).
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
