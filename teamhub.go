package loom

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// TeamHub is a hub's store of teams (docs/team.md): each team's signed
// membership chain, which the hub verifies before it appends an entry
// but clients never take on trust, the index of which hub users may
// read and write the team's records (derived from the chain), and the
// records its members' machines publish, sealed and signed, filed by
// writer and index as sync records are. The hub's PostgreSQL store is
// one.
type TeamHub interface {
	// TeamChain returns the team's entries after seq after, in order.
	TeamChain(ctx context.Context, team string, after int64) ([]TeamEntry, error)
	// AppendTeamEntry stores entry as the team's entry seq, and makes
	// members the hub users who may read and write its records, in one
	// transaction. An entry at seq already is ECONFLICT.
	AppendTeamEntry(ctx context.Context, team string, seq int64, entry []byte, members []TeamMember) error
	// TeamAccess reports whether user may read and write the team's
	// records.
	TeamAccess(ctx context.Context, team, user string) (bool, error)
	// PutTeamRecords stores recs (each with its Epoch), skipping those
	// the hub holds (same team, host and index), and returns how many it
	// had not held.
	PutTeamRecords(ctx context.Context, team string, recs []SyncRecord) (int, error)
	// TeamRecords returns up to limit of host's records after index
	// after, in order, cut at MaxSyncPageBytes as SyncRecords is.
	TeamRecords(ctx context.Context, team, host string, after int64, limit int) ([]SyncRecord, error)
	// TeamHosts returns what the hub holds of each writer of the team:
	// last index, records and bytes, counted over the team's records.
	TeamHosts(ctx context.Context, team string) ([]SyncHost, error)
	// TeamLast returns the last index the hub holds of the team's
	// writer host, 0 when none: what a page of its records is told
	// apart from the last by.
	TeamLast(ctx context.Context, team, host string) (int64, error)
	// TeamLasts returns each writer of the team with its last index only
	// (Records and Bytes zero): what a member's sync asks at every pull,
	// read off the index without counting the team's records.
	TeamLasts(ctx context.Context, team string) ([]SyncHost, error)
	// ClaimTeamRecords files what the records of one push claim, in one
	// transaction: each session tag's owner (the member who first wrote
	// it) and each key's newest chain head. A tag another member owns,
	// or a head older than one the key named before (or than the one
	// before it in claims), is refused with a *TeamClaimError and nothing
	// is filed; a claim filed before is no change.
	ClaimTeamRecords(ctx context.Context, team string, claims []TeamClaim) error
	// TeamUsage returns how many records the hub holds under the writer
	// ids of any of keys (writer ids start with their key's fingerprint,
	// its spaces left out) and their bytes (header and body): what one
	// member holds against the team's budget.
	TeamUsage(ctx context.Context, team string, keys []string) (records, bytes int64, err error)
	// TeamSums returns the sum (TeamRecordSum) of each of the writer
	// host's records after index after, in order: what its author's
	// machine audits the hub by, without reading the records again.
	TeamSums(ctx context.Context, team, host string, after int64) ([]TeamSum, error)
	// TeamSessionRecords returns up to limit of the team's records whose
	// header names session tag tag, first received first: what the hub
	// checks whose a session is against (its first record, signed by its
	// author), rather than a row of its table of claims alone.
	TeamSessionRecords(ctx context.Context, team, tag string, limit int) ([]SyncRecord, error)
	// RestoreTeamRecord files rec over the record the hub holds at its
	// writer and index: what the hub does with a record of a writer who
	// left, sent on by a teammate, when the row it holds is not the one
	// its author signed (an operator's edit).
	RestoreTeamRecord(ctx context.Context, team string, rec SyncRecord) error
}

// TeamSum is one record's index and sum as the hub holds it.
type TeamSum struct {
	Index int64
	Sum   []byte
}

// TeamSumsDigest digests sums, in order: sha256 over each one's index
// (8 bytes, big-endian) and sum, hex. A writer's author and the hub each
// make it of what they hold: equal digests, equal records.
func TeamSumsDigest(sums []TeamSum) string {
	h := sha256.New()
	var idx [8]byte
	for _, x := range sums {
		binary.BigEndian.PutUint64(idx[:], uint64(x.Index))
		h.Write(idx[:])
		h.Write(x.Sum)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TeamRecordSum is the sum of a record of header and body:
// sha256(sha256(header) || sha256(body)), so that no byte can move
// between the two unseen.
func TeamRecordSum(header, body []byte) []byte {
	h, b := sha256.Sum256(header), sha256.Sum256(body)
	s := sha256.Sum256(append(h[:], b[:]...))
	return s[:]
}

// TeamClaim is what one team record claims: the session tag it writes
// and its owner (the member, by fingerprint: a member's machines share
// their sessions), and the chain head (Seq) its author's key names.
type TeamClaim struct {
	Index   int64
	Session string
	Owner   string
	Author  string
	Seq     int64
	// Proven is set when the first record the hub holds of the session,
	// signed by its author, is Owner's: the claim is filed over whatever
	// the hub's table of claims held (an operator may have given the
	// session to another member).
	Proven bool
}

// TeamClaimError is a claim ClaimTeamRecords refuses: Owner owns the
// session tag already, or the key named head Prior before.
type TeamClaimError struct {
	Claim TeamClaim
	// Owner is the member who owns the claim's session ("" when the
	// refusal is its head's).
	Owner string
	// Prior is the newest head the claim's key named before.
	Prior int64
}

func (e *TeamClaimError) Error() string {
	if e.Owner != "" {
		return "session " + e.Claim.Session + " is another member's"
	}
	return "a chain head older than the one its key named before"
}

// TeamEntry is one entry of a team's chain as the hub keeps it.
type TeamEntry struct {
	Seq        int64
	Entry      []byte
	ReceivedAt time.Time
}

// TeamMember is one row of a hub's index of who may read a team's
// records: a member's fingerprint and hub user.
type TeamMember struct {
	Member string
	User   string
}

// TeamCheckpoints is a hub's store of its checkpoints of teams' chains
// (docs/team.md, "Checkpoints: the chain verified once"): the verified
// state after entry Seq, kept so that a hub process that starts takes in
// the entries after it instead of verifying the chain from its genesis.
// The store keeps what it is given; the hub seals each checkpoint with a
// key of its own (KeyID names it) and checks it on load, as the store's
// rows are the operator's to edit. The hub's PostgreSQL store is one.
type TeamCheckpoints interface {
	// TeamCheckpoint returns team's checkpoint sealed with key keyID,
	// nil when none.
	TeamCheckpoint(ctx context.Context, team, keyID string) (*TeamCheckpoint, error)
	// PutTeamCheckpoint keeps c as team's checkpoint under c.KeyID, in
	// place of the one kept.
	PutTeamCheckpoint(ctx context.Context, team string, c TeamCheckpoint) error
}

// TeamCheckpoint is one kept checkpoint: the state after entry Seq (as
// the hub encodes it) and the MAC over it of the hub's key KeyID.
type TeamCheckpoint struct {
	KeyID string
	Seq   int64
	State []byte
	MAC   []byte
}
