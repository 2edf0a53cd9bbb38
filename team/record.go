package team

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
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
	// ChainSeq and ChainHead are the chain head its writer had verified
	// when it wrote it: the last entry's seq and hash. A client refuses
	// a record whose author was no member at that head, or that is
	// sealed under another epoch than that head's; one naming a head
	// later than its own chain is evidence that the hub hides entries
	// from it. Records of a loom before them name none (0, "").
	ChainSeq  int64  `json:"chain_seq,omitempty"`
	ChainHead string `json:"chain_head,omitempty"`
	// Session is the tag of the session the record writes (SessionTag):
	// the hub, which cannot read the session's id, files each tag's
	// owner (the member who first wrote it) and refuses another
	// member's record of it; a client sets aside a record whose tag is
	// not its session's. Records of a loom before it name none ("").
	Session string `json:"session,omitempty"`
}

const sessionTagPrefix = "loom team session 1\n"

// SessionTag is the tag of session id in team teamID: the first 16
// bytes of HMAC-SHA256, keyed by the team's key of epoch 1 (which every
// member and machine holds), of the team's id and the session's, in
// hex. It is the same under every epoch, so that a session keeps its
// owner across rotations; the hub, holding no key, learns which records
// write one session and nothing of its id.
func SessionTag(ring Keyring, teamID, id string) (string, error) {
	key, ok := ring[1]
	if !ok {
		return "", errors.New("no team key of epoch 1, which a session's tag is made with")
	}
	return hex.EncodeToString(key.MAC([]byte(sessionTagPrefix + teamID + "\n" + id))[:16]), nil
}

// ValidSessionTag reports whether tag has a session tag's form (32 hex
// digits).
func ValidSessionTag(tag string) bool {
	if len(tag) != 32 {
		return false
	}
	_, err := hex.DecodeString(tag)
	return err == nil
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

// RecordOf returns r, a record of a team's space as the hub keeps it
// (loom.SyncRecord, its epoch set), as a team record.
func RecordOf(r loom.SyncRecord) Record {
	return Record{Host: r.Host, Index: r.Index, Epoch: r.Epoch, Header: r.Header, Body: r.Body}
}

// Sync returns r as a record of the team's space on the hub.
func (r Record) Sync() loom.SyncRecord {
	return loom.SyncRecord{Host: r.Host, Index: r.Index, Epoch: r.Epoch, Header: r.Header, Body: r.Body}
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
	// The one path of records, personal and team: sealed, then signed
	// (package envelope); a team's signature is its author's own key.
	body, err := envelope.SealSigned(key, id.Sign, recordSignPrefix, hb, payload)
	if err != nil {
		return Record{}, err
	}
	return Record{Host: h.Host, Index: h.Index, Epoch: h.Epoch, Header: hb, Body: body}, nil
}

// signedBy reports whether body is signed by the member key sign over
// header (envelope.VerifySigned, under a team record's domain).
func signedBy(sign []byte, header, body []byte) bool {
	_, err := envelope.VerifySigned(ed25519.PublicKey(sign), recordSignPrefix, header, body)
	return err == nil
}

// ErrNotMember is in the chain of a record whose author held no key of
// its epoch in the verified chain (someone the hub let in, or a member
// removed before it): it is not applied.
var ErrNotMember = errors.New("written by no member of that epoch")

// ErrNotThen is in the chain of a record its author could not have
// written when it says: they were no member at the head it names, or
// it is sealed under another epoch than that head's, or its author left
// and the chain does not name it among what they wrote before.
var ErrNotThen = errors.New("written when its author could not")

// NewerChain is in the chain of a record written under a chain newer
// than the one this machine verified: it names a later head, or an
// epoch this chain has not made. It is kept apart (not applied, read
// again at the next sync). Signed says it is signed by a member of this
// chain: evidence that the hub hides entries from this machine.
type NewerChain struct {
	Seq    int64
	Epoch  int
	Signed bool
}

func (n *NewerChain) Error() string {
	return fmt.Sprintf("written under a newer chain than this machine's (entry %d, epoch %d)", n.Seq, n.Epoch)
}

// ErrPending is in the chain of a record of a member who left, read
// before the admin's rotation names what they wrote before they left:
// it is kept apart until then.
var ErrPending = errors.New("its author left, and the admin's rotation has not yet named what they wrote before")

// OpenRecord checks r against the verified chain st and opens it with
// ring: its header must be the one it travels under, its author a holder
// of its epoch's key, its signature the author's; its author a member at
// the chain head it names, its epoch that head's; a record of a member
// who left must be one the chain names as written before (State.Cut).
// It returns the header and the payload.
func OpenRecord(st *State, ring Keyring, r Record) (*Header, []byte, error) {
	var h Header
	if err := json.Unmarshal(r.Header, &h); err != nil {
		return nil, nil, fmt.Errorf("record %s/%d: bad header: %w", r.Host, r.Index, err)
	}
	if h.Team != st.Team || h.Host != r.Host || h.Index != r.Index || h.Epoch != r.Epoch {
		return nil, nil, fmt.Errorf("record %s/%d: %w: filed under another header", r.Host, r.Index, envelope.ErrTampered)
	}
	if len(r.Body) < ed25519.SignatureSize {
		return nil, nil, fmt.Errorf("record %s/%d: %w", r.Host, r.Index, envelope.ErrTampered)
	}
	if Bound(r.Host) && !OwnsWriter(h.Author, r.Host) {
		// The hub refuses such a put (CheckPut): only its operator files
		// one, under a writer id another key owns.
		return nil, nil, fmt.Errorf("record %s/%d: %w: filed under another key's writer id", r.Host, r.Index, envelope.ErrTampered)
	}
	sealed := r.Body[ed25519.SignatureSize:]
	author := st.Past[h.Author]
	if h.ChainSeq > st.Seq || h.Epoch > st.Epoch {
		nc := &NewerChain{Seq: h.ChainSeq, Epoch: h.Epoch}
		nc.Signed = author != nil && st.In(h.Author) && signedBy(author.Sign, r.Header, r.Body)
		return nil, nil, fmt.Errorf("record %s/%d: %w", r.Host, r.Index, nc)
	}
	if author == nil || !st.Holders[h.Epoch][h.Author] || isInvite(st, h.Author) {
		return nil, nil, fmt.Errorf("record %s/%d: %w %d", r.Host, r.Index, ErrNotMember, h.Epoch)
	}
	if !signedBy(author.Sign, r.Header, r.Body) {
		return nil, nil, fmt.Errorf("record %s/%d: not signed by %s: %w", r.Host, r.Index, author.Name, envelope.ErrTampered)
	}
	if err := st.writtenThen(&h, r); err != nil {
		return nil, nil, fmt.Errorf("record %s/%d: %w", r.Host, r.Index, err)
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

// writtenThen checks that h's author could write it at the head it
// names: a member then (joined at or before it, not left by it), under
// that head's epoch; and that a record of an author who left since is
// one the chain names as written before they left.
func (st *State) writtenThen(h *Header, r Record) error {
	if h.ChainSeq > 0 {
		if got := st.Hashes[h.ChainSeq-1]; got != h.ChainHead {
			return fmt.Errorf("%w: it names entry %d of a chain this machine does not hold (the hub shows members different chains, or the header was made up)", ErrNotThen, h.ChainSeq)
		}
		if left, ok := st.Left[h.Author]; ok && left <= h.ChainSeq {
			return fmt.Errorf("%w: its author left or was removed at entry %d, by the head it names (entry %d)", ErrNotThen, left, h.ChainSeq)
		}
		if joined := st.Joined[h.Author]; joined > h.ChainSeq {
			return fmt.Errorf("%w: its author joined at entry %d, after the head it names (entry %d)", ErrNotThen, joined, h.ChainSeq)
		}
		if ep := st.EpochOf(h.ChainSeq); h.Epoch != ep {
			return fmt.Errorf("%w: it is sealed under epoch %d, and the head it names (entry %d) is of epoch %d", ErrNotThen, h.Epoch, h.ChainSeq, ep)
		}
	}
	left, ok := st.Left[h.Author]
	if !ok {
		return nil
	}
	if st.EpochAt[st.Epoch] < left {
		return ErrPending
	}
	if last, cut := st.Cut[r.Host]; !cut || r.Index > last {
		return fmt.Errorf("%w: its author left at entry %d, and the chain names no record of writer %s up to %d as written before", ErrNotThen, left, r.Host, r.Index)
	}
	return nil
}

// EpochOf returns the epoch of the chain's head at entry seq: the
// newest one started at or before it.
func (st *State) EpochOf(seq int64) int {
	ep := 0
	for e, at := range st.EpochAt {
		if at <= seq && e > ep {
			ep = e
		}
	}
	return ep
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
