package team

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
)

// Header is what travels in the clear beside a team record, bound to
// its ciphertext and signature: the hub files the record by it.
type Header struct {
	Team  string `json:"team"`
	Host  string `json:"host"`
	Index int64  `json:"index"`
	Epoch int    `json:"epoch"`
	// Author is the fingerprint of the member who wrote and signed it.
	Author string `json:"author"`
}

// Record is one record of a member's machine's log on the hub.
type Record struct {
	Host   string
	Index  int64
	Epoch  int
	Header []byte
	// Body is the author's Ed25519 signature of the header and the
	// sealed payload (64 bytes), then the payload sealed under the
	// epoch's key (package envelope).
	Body []byte
}

const recordSignPrefix = "loom team record 1\n"

// SealRecord seals payload under the newest key of ring, signed by id,
// as record index of host.
func SealRecord(h Header, ring Keyring, id *Identity, payload []byte) (Record, error) {
	key, ok := ring[h.Epoch]
	if !ok {
		return Record{}, fmt.Errorf("no team key of epoch %d", h.Epoch)
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return Record{}, err
	}
	sealed, err := envelope.Seal(key, hb, payload)
	if err != nil {
		return Record{}, err
	}
	sig := ed25519.Sign(id.Sign, signed(hb, sealed))
	return Record{Host: h.Host, Index: h.Index, Epoch: h.Epoch, Header: hb, Body: append(sig, sealed...)}, nil
}

func signed(header, sealed []byte) []byte {
	b := make([]byte, 0, len(recordSignPrefix)+8+len(header)+len(sealed))
	b = append(b, recordSignPrefix...)
	b = fmt.Appendf(b, "%d\n", len(header))
	b = append(b, header...)
	return append(b, sealed...)
}

// ErrNotMember is in the chain of a record whose author held no key of
// its epoch in the verified chain (someone the hub let in, or a member
// removed before it): it is not applied.
var ErrNotMember = errors.New("written by no member of that epoch")

// OpenRecord checks r against the verified chain st and opens it with
// ring: its header must be the one it travels under, its author a holder
// of its epoch's key, its signature the author's. It returns the header
// and the payload.
func OpenRecord(st *State, ring Keyring, r Record) (*Header, []byte, error) {
	var h Header
	if err := json.Unmarshal(r.Header, &h); err != nil {
		return nil, nil, fmt.Errorf("record %s/%d: bad header: %w", r.Host, r.Index, err)
	}
	if h.Team != st.Team || h.Host != r.Host || h.Index != r.Index || h.Epoch != r.Epoch {
		return nil, nil, fmt.Errorf("record %s/%d: %w: filed under another header", r.Host, r.Index, envelope.ErrTampered)
	}
	author := st.Past[h.Author]
	if author == nil || !st.Holders[h.Epoch][h.Author] || isInvite(st, h.Author) {
		return nil, nil, fmt.Errorf("record %s/%d: %w %d", r.Host, r.Index, ErrNotMember, h.Epoch)
	}
	if len(r.Body) < ed25519.SignatureSize {
		return nil, nil, fmt.Errorf("record %s/%d: %w", r.Host, r.Index, envelope.ErrTampered)
	}
	sig, sealed := r.Body[:ed25519.SignatureSize], r.Body[ed25519.SignatureSize:]
	if !ed25519.Verify(ed25519.PublicKey(author.Sign), signed(r.Header, sealed), sig) {
		return nil, nil, fmt.Errorf("record %s/%d: not signed by %s: %w", r.Host, r.Index, author.Name, envelope.ErrTampered)
	}
	key, ok := ring[h.Epoch]
	if !ok {
		return nil, nil, fmt.Errorf("record %s/%d: %w: this machine holds no team key of epoch %d", r.Host, r.Index, envelope.ErrWrongKey, h.Epoch)
	}
	payload, err := envelope.Open(key, r.Header, sealed)
	if err != nil {
		return nil, nil, fmt.Errorf("record %s/%d: %w", r.Host, r.Index, err)
	}
	return &h, payload, nil
}

// isInvite reports whether fp is an invite's key, which signs a join
// and nothing else.
func isInvite(st *State, fp string) bool {
	_, ok := st.Invites[fp]
	return ok
}

// IsInvite reports whether fp is an invite's key, not a member's.
func (st *State) IsInvite(fp string) bool { return isInvite(st, fp) }

// Code is what an invite code carries: where the team is, who its admin
// is, and the invite's private keys.
type Code struct {
	Hub    string `json:"hub"`
	Team   string `json:"team"`
	Name   string `json:"name"`
	Admin  string `json:"admin"`
	Invite []byte `json:"invite"`
}

// codePrefix starts every invite code.
const codePrefix = "loomteam1-"

// String is the code as text to hand over.
func (c *Code) String() string {
	b, _ := json.Marshal(c)
	return codePrefix + base64.RawURLEncoding.EncodeToString(b)
}

// ParseCode reads an invite code.
func ParseCode(s string) (*Code, *Identity, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, codePrefix) {
		return nil, nil, loom.Errorf(loom.EINVALID, "not a loom team invite code (they start %s)", codePrefix)
	}
	b, err := base64.RawURLEncoding.DecodeString(s[len(codePrefix):])
	if err != nil {
		return nil, nil, loom.Errorf(loom.EINVALID, "the invite code is mistyped: %v", err)
	}
	var c Code
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, nil, loom.Errorf(loom.EINVALID, "the invite code is mistyped: %v", err)
	}
	if err := ValidTeamID(c.Team); err != nil {
		return nil, nil, err
	}
	id, err := ParseIdentity(c.Invite)
	if err != nil {
		return nil, nil, loom.Errorf(loom.EINVALID, "the invite code is mistyped: %v", err)
	}
	return &c, id, nil
}

// Project is what a share entry names, sealed: a project as sync
// identifies it, and what is shared of it.
type Project struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Mode is ModeContent or ModeAggregates ("" in an unshare).
	Mode string `json:"mode,omitempty"`
}

// What a member shares of a project.
const (
	ModeContent    = "content"
	ModeAggregates = "aggregates"
)

// shareHeader binds a share's sealed part to its team and epoch.
func shareHeader(team string, epoch int) []byte {
	return fmt.Appendf(nil, "loom team share 1\n%s\n%d", team, epoch)
}

// SealProject seals p under the newest key of ring, for a share entry.
func SealProject(team string, ring Keyring, p Project) (int, []byte, error) {
	epoch, key := ring.Latest()
	b, err := json.Marshal(p)
	if err != nil {
		return 0, nil, err
	}
	sealed, err := envelope.Seal(key, shareHeader(team, epoch), b)
	return epoch, sealed, err
}

// OpenProject opens what SealProject sealed in e.
func OpenProject(ring Keyring, e *Entry) (Project, error) {
	var p Project
	key, ok := ring[e.Epoch]
	if !ok {
		return p, fmt.Errorf("no team key of epoch %d", e.Epoch)
	}
	b, err := envelope.Open(key, shareHeader(e.Team, e.Epoch), e.Sealed)
	if err != nil {
		return p, err
	}
	return p, json.Unmarshal(b, &p)
}
