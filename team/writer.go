package team

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"time"
)

// A writer id (a record's Host) is bound to the key that writes under
// it: the signing key's fingerprint in 32 hex digits, '-', then 16
// random ones, so that a machine that loses its state starts a new
// writer of its own. A hub takes a record only from the hub user of the
// member (or machine) its writer id names, signed by that key
// (CheckPut): nobody files records under another's writer id.

// NewWriter returns a new writer id of the key fp.
func NewWriter(fp string) string {
	var b [8]byte
	rand.Read(b[:])
	return compact(fp) + "-" + hex.EncodeToString(b[:])
}

// OwnsWriter reports whether host is a writer id of the key fp.
func OwnsWriter(fp, host string) bool {
	return strings.HasPrefix(host, compact(fp)+"-")
}

func compact(fp string) string { return strings.ReplaceAll(fp, " ", "") }

// Bound reports whether host has the form of a writer id bound to a key
// (32 hex digits, '-', 16 hex digits), as against a writer id of before
// the binding (16 random hex digits), which names no key.
func Bound(host string) bool {
	fp, rnd, ok := strings.Cut(host, "-")
	if !ok || len(fp) != 32 || len(rnd) != 16 {
		return false
	}
	_, err1 := hex.DecodeString(fp)
	_, err2 := hex.DecodeString(rnd)
	return err1 == nil && err2 == nil
}

// ErrNotYours is in the chain of a put the hub refuses: a record under
// another's writer id, signed by another key than its author's, by a
// key that is no member now, or sent by another hub user than the
// author's.
var ErrNotYours = errors.New("not a record this hub user may write")

// CheckPut checks a record hub user user puts for the team whose
// verified chain is st: its header is the one it travels under, its
// author a member (or a member's machine) now whose hub user is user and
// who holds the key of its epoch, its writer id the author's, its
// signature the author's, and the chain head it names one of st's at
// which its author could write it (as a member's client checks it). It
// does not open the record (the hub cannot).
func CheckPut(st *State, user string, r Record) error {
	var h Header
	if err := json.Unmarshal(r.Header, &h); err != nil {
		return fmt.Errorf("record %d: bad header: %w", r.Index, err)
	}
	if h.Team != st.Team || h.Host != r.Host || h.Index != r.Index || h.Epoch != r.Epoch {
		return fmt.Errorf("record %d: %w: its header names another team, writer, index or epoch", r.Index, ErrNotYours)
	}
	m := st.Past[h.Author]
	switch {
	case !st.In(h.Author) || m == nil:
		return fmt.Errorf("record %d: %w: its author %s is no member of team %s now", r.Index, ErrNotYours, h.Author, st.Name)
	case m.User != user:
		return fmt.Errorf("record %d: %w: its author is hub user %s's key, and this token is %s's", r.Index, ErrNotYours, m.User, user)
	case !OwnsWriter(h.Author, r.Host):
		return fmt.Errorf("record %d: %w: writer id %s is not one of its author's (a writer id starts with its key's fingerprint)", r.Index, ErrNotYours, r.Host)
	case !st.Holders[h.Epoch][h.Author]:
		return fmt.Errorf("record %d: %w: its author holds no key of epoch %d", r.Index, ErrNotYours, h.Epoch)
	case !signedBy(m.Sign, r.Header, r.Body):
		return fmt.Errorf("record %d: %w: it is not signed by its author", r.Index, ErrNotYours)
	case !ValidSessionTag(h.Session):
		// The hub files each session's owner by its tag: a record
		// naming none could change anyone's session.
		return fmt.Errorf("record %d: %w: it names no session tag (a loom before sessions had owners wrote it: update loom)", r.Index, ErrNotYours)
	case h.ChainSeq > st.Seq:
		// A record naming a later head than the hub's own chain would be
		// kept apart by every member and stop their publishing.
		return fmt.Errorf("record %d: %w: it names entry %d of the chain, which has %d", r.Index, ErrNotYours, h.ChainSeq, st.Seq)
	}
	if err := st.writtenThen(&h, r); err != nil {
		return fmt.Errorf("record %d: %w: %w", r.Index, ErrNotYours, err)
	}
	return nil
}

// CheckRelay checks r, a record a member's machine sends on for a
// writer who left the team (its author removed, or left): the chain
// named the writer's last index when it went (State.Cut), and r is one
// of the records up to it, signed by its author, under the author's
// writer id, sealed under an epoch the author held and at a head at
// which it could write it. Its author can send nothing again; a
// teammate who kept it sends it on byte for byte when the hub lost or
// altered it, and it restores the writer's log as written (docs/team.md,
// "A dropped record is restored or every member is told").
func CheckRelay(st *State, r Record) error {
	last, ok := st.Cut[r.Host]
	if !ok || r.Index < 1 || r.Index > last {
		return fmt.Errorf("record %d: %w: writer %s is no writer who left the team, or its index is past the last the chain named for it", r.Index, ErrNotYours, r.Host)
	}
	h, err := SignedRecord(st, r)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotYours, err)
	}
	if !st.Holders[h.Epoch][h.Author] {
		return fmt.Errorf("record %d: %w: its author held no key of epoch %d", r.Index, ErrNotYours, h.Epoch)
	}
	if err := st.writtenThen(h, r); err != nil {
		return fmt.Errorf("record %d: %w: %w", r.Index, ErrNotYours, err)
	}
	return nil
}

// SignedRecord returns the header of r, a record a hub holds of the team whose
// verified chain is st, when r is filed where its header says, signed by
// its author under one of that key's writer ids, and names a session tag:
// the author a key of the chain, in the team now or before (a record
// stays its author's after they leave). It is what the hub takes a
// session's first record's word by on whose the session is: it cannot
// open it, and trusts no row of its tables for it.
func SignedRecord(st *State, r Record) (*Header, error) {
	var h Header
	if err := json.Unmarshal(r.Header, &h); err != nil {
		return nil, fmt.Errorf("record %s/%d: bad header: %w", r.Host, r.Index, err)
	}
	m := st.Past[h.Author]
	switch {
	case h.Team != st.Team || h.Host != r.Host || h.Index != r.Index || h.Epoch != r.Epoch:
		return nil, fmt.Errorf("record %s/%d: its header names another team, writer, index or epoch", r.Host, r.Index)
	case m == nil || st.IsInvite(h.Author) || st.MemberOf(h.Author) == nil || !OwnsWriter(h.Author, r.Host):
		return nil, fmt.Errorf("record %s/%d: its author is no key of the chain's, or the writer id is not its", r.Host, r.Index)
	case !ValidSessionTag(h.Session):
		return nil, fmt.Errorf("record %s/%d: it names no session tag", r.Host, r.Index)
	case !signedBy(m.Sign, r.Header, r.Body):
		return nil, fmt.Errorf("record %s/%d: it is not signed by its author", r.Host, r.Index)
	}
	return &h, nil
}

// readPrefix binds an invite's proof to its purpose.
const readPrefix = "loom team read 1\n"

// ReadProof is what an invite's holder shows the hub to read the team's
// chain before joining: the invite's signature over the team's id and
// the hub user asking (so that the proof reads for that user alone).
func ReadProof(teamID, user string, inv *Identity) []byte {
	return ed25519.Sign(inv.Sign, []byte(readPrefix+teamID+"\n"+user))
}

// CheckReadProof checks proof, the read proof of invite fp for user:
// nil when fp is an invite of st that can still join at now; the
// invite's own refusal (used, revoked, expired) when the proof is its
// holder's but it can join no more, which only its holder learns; and
// false ok for a proof that is not one.
func (st *State) CheckReadProof(user, fp string, proof []byte, now time.Time) (ok bool, err error) {
	m := st.Past[fp]
	if _, invite := st.Invites[fp]; !invite || m == nil || !ed25519.Verify(ed25519.PublicKey(m.Sign), []byte(readPrefix+st.Team+"\n"+user), proof) {
		return false, nil
	}
	return true, st.InviteError(fp, now)
}

// PadClass is the size class a record's payload of n bytes is padded to
// before it is sealed: 1 KiB at least, then eight classes in each power
// of two (1280, 1536, … 2048, 2560, …), so that the hub learns a
// record's size to within a quarter, not its length.
func PadClass(n int) int {
	if n <= 1024 {
		return 1024
	}
	step := (1 << bits.Len(uint(n-1))) / 8
	return (n + step - 1) / step * step
}
