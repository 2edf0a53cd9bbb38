package team

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/loomhq/loom"
)

// The kinds of a membership change.
const (
	KindCreate  = "create"  // the genesis: the team's name, its admin, epoch 1's key for the admin
	KindInvite  = "invite"  // the admin names an invite's keys and wraps the keyring to it (or a member, for a machine of theirs)
	KindJoin    = "join"    // an invite's key names a member (or a member's machine), who wraps the keyring to itself
	KindRevoke  = "revoke"  // the admin (or the member who made a machine's invite) revokes an open invite
	KindRemove  = "remove"  // the admin removes a member and rotates the key for the rest
	KindLeave   = "leave"   // a member leaves; the admin's next rotate shuts them out
	KindRotate  = "rotate"  // the admin makes a new epoch's key for the members
	KindShare   = "share"   // a member shares a project (sealed under the team key)
	KindUnshare = "unshare" // a member stops sharing a project
	// KindBudget (budget.go): the admin sets the team's budgets per member.
)

// Entry is one membership change. The fields a kind does not use are
// empty.
type Entry struct {
	Team string `json:"team"`
	Seq  int64  `json:"seq"`
	// Prev is the hex SHA-256 of the previous entry as signed ("" for
	// the first): each entry names the one before it, so none can be
	// dropped, moved or put back elsewhere.
	Prev string    `json:"prev"`
	Kind string    `json:"kind"`
	At   time.Time `json:"at"`
	// By is the fingerprint of the key that signed the entry: the
	// admin's, a member's, or an invite's (join).
	By string `json:"by"`
	// Name is the team's name (create).
	Name string `json:"name,omitempty"`
	// Member is the admin (create) or the member who joins (join).
	Member *Member `json:"member,omitempty"`
	// Invite is an invite's public keys (invite).
	Invite *Member `json:"invite,omitempty"`
	// Expires is when an invite stops being usable (invite; nil: never,
	// as in chains made before invites expired).
	Expires *time.Time `json:"expires,omitempty"`
	// Machine says an invite is for another machine of the member who
	// signs it, not for a new member (invite).
	Machine bool `json:"machine,omitempty"`
	// Target is the fingerprint of the member removed (remove) or of the
	// invite revoked (revoke).
	Target string `json:"target,omitempty"`
	// Epoch is the epoch the entry's keys start (create, remove,
	// rotate) or the one its Sealed part is sealed under (share,
	// unshare).
	Epoch int `json:"epoch,omitempty"`
	// Keys are the keyring wrapped for each recipient, by fingerprint.
	Keys map[string][]byte `json:"keys,omitempty"`
	// Writers are, in a remove or a rotate, the last record index of
	// each writer id of the members and machines who left (the removed
	// one, those who left since the last rotation), as the admin's
	// machine found them on the hub: what they wrote before they left.
	// A record of theirs past it, or of another writer id, is never
	// applied (State.Cut).
	Writers map[string]int64 `json:"writers,omitempty"`
	// Sealed is what a share names, sealed under the team's key.
	Sealed []byte `json:"sealed,omitempty"`
	// Budget is the team's budget per member the admin sets (budget).
	Budget *Budget `json:"budget,omitempty"`
	// Version is the rules the entry was written under: 0 before a
	// departure revoked the invites made by or for whoever went (such a
	// remove or rotate may wrap its key for them too), EntryVersion since.
	Version int `json:"version,omitempty"`
}

// EntryVersion is the rules the entries a client writes follow: a
// remove or rotate wraps its key for exactly the members, their machines
// and the open invites, none of those a departure revoked (version 2);
// a machine that leaves or is removed takes with it every machine that
// joined through an invite it made, and those machines' in turn
// (version 3).
const EntryVersion = 3

// The versions of the chain's rules.
const (
	// versionRevokes: a departure revokes the open invites made by or
	// for whoever went, and no new key is wrapped for them.
	versionRevokes = 2
	// versionTakesInvited: a departure takes the machines that joined
	// through the invites of whoever went.
	versionTakesInvited = 3
)

// Signed is an entry as the hub keeps it: its JSON and the signature
// over it.
type Signed struct {
	Body []byte `json:"body"`
	Sig  []byte `json:"sig"`
}

// signPrefix binds a signature to its purpose.
const signPrefix = "loom team entry 1\n"

// Sign encodes e and signs it with id.
func Sign(e *Entry, id *Identity) ([]byte, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	sig := ed25519.Sign(id.Sign, append([]byte(signPrefix), body...))
	return json.Marshal(Signed{Body: body, Sig: sig})
}

// Hash is the hex SHA-256 of a signed entry: the next entry's Prev.
func Hash(signed []byte) string {
	sum := sha256.Sum256(signed)
	return hex.EncodeToString(sum[:])
}

// Decode reads a signed entry without checking it.
func Decode(signed []byte) (*Entry, *Signed, error) {
	var s Signed
	if err := json.Unmarshal(signed, &s); err != nil {
		return nil, nil, fmt.Errorf("not a signed entry: %w", err)
	}
	var e Entry
	if err := json.Unmarshal(s.Body, &e); err != nil {
		return nil, nil, fmt.Errorf("not a signed entry: %w", err)
	}
	return &e, &s, nil
}

// NewEntry starts the next entry of st's chain, of kind, signed by by.
func (st *State) NewEntry(kind, by string, at time.Time) *Entry {
	return &Entry{Team: st.Team, Seq: st.Seq + 1, Prev: st.Head, Kind: kind, At: at.UTC().Truncate(time.Millisecond), By: by, Version: EntryVersion}
}

// NewTeamID returns a new team id: 16 random bytes in hex.
func NewTeamID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// ValidTeamID checks a team id as it may be used in a path.
func ValidTeamID(id string) error {
	if len(id) != 32 {
		return loom.Errorf(loom.EINVALID, "team id %q is not 32 hex digits", id)
	}
	if _, err := hex.DecodeString(id); err != nil {
		return loom.Errorf(loom.EINVALID, "team id %q is not 32 hex digits", id)
	}
	return nil
}
