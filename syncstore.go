package loom

import (
	"context"
	"time"
)

// SyncRecord is one record of a host's log as the hub of sync keeps it.
// Each host of a user appends to a log of its own, numbered from 1
// without gaps; the hub stores the records as their host sent them and
// never reads them: Header is bytes the client keeps in the clear beside
// the record, and Body is ciphertext (envelope.Seal's).
type SyncRecord struct {
	// Host is the id of the host whose log holds the record (a UUID).
	Host string
	// Index is the record's place in its host's log, from 1.
	Index int64
	// Epoch is the epoch of the team key a team's record is sealed
	// under (docs/team.md); 0 for a record of a user's own.
	Epoch  int
	Header []byte
	Body   []byte
	// ReceivedAt is when the hub stored the record; set by the store,
	// ignored when the record is put.
	ReceivedAt time.Time
}

// SyncHost is what the hub holds of one host's log.
type SyncHost struct {
	Host string
	// Last is the index of the host's last record: the hub holds the
	// records 1 to Last.
	Last int64
	// Records and Bytes are how many records the hub holds of the host
	// and the size of their headers and bodies together.
	Records int64
	Bytes   int64
	// UpdatedAt is when the last of them was stored.
	UpdatedAt time.Time
}

// Limits of the records a hub takes. A body of MaxSyncBody holds a
// message of about that size sealed; a batch may always hold one such
// record.
const (
	MaxSyncHeader     = 4 << 10
	MaxSyncBody       = 16 << 20
	MaxSyncBatch      = 1000
	MaxSyncBatchBytes = 64 << 20
	// MaxSyncPageBytes is where a page of records read back is cut: it
	// holds at most this many bytes of headers and bodies, but always
	// at least one record.
	MaxSyncPageBytes = 8 << 20
)

// SyncStore keeps the records of sync for the hub, per user and host. The
// sqlite and postgres stores implement it next to Store and TokenStore.
// One user's records are never another's: every method is given the
// user, and finds nothing of anyone else's.
type SyncStore interface {
	// PutSyncRecords stores records of the user's hosts in one
	// transaction and returns how many it stored. Putting is idempotent:
	// a record already held with the same header and body is skipped
	// (and not counted). A different record where one is held is
	// ECONFLICT; a record that would leave a gap in its host's log (an
	// index past the host's last + 1) is EINVALID, as is a batch that
	// fails ValidSyncBatch. Nothing is stored unless all of it can be.
	PutSyncRecords(ctx context.Context, userID string, recs []SyncRecord) (stored int, err error)
	// SyncRecords returns the user's records of host after index after,
	// in index order: at most limit of them (MaxSyncBatch when limit is
	// 0), cut at MaxSyncPageBytes.
	SyncRecords(ctx context.Context, userID, host string, after int64, limit int) ([]SyncRecord, error)
	// SyncHosts returns what is held of each of the user's hosts, by
	// host id.
	SyncHosts(ctx context.Context, userID string) ([]SyncHost, error)
}

// SyncBatchOverLimit checks the sizes of a batch of records to put: at
// most MaxSyncBatch records, none with a header over MaxSyncHeader or a
// body over MaxSyncBody, MaxSyncBatchBytes in all. Its error is
// EINVALID and says which limit.
func SyncBatchOverLimit(recs []SyncRecord) error {
	if len(recs) > MaxSyncBatch {
		return Errorf(EINVALID, "a batch holds at most %d records, not %d", MaxSyncBatch, len(recs))
	}
	var total int64
	for _, r := range recs {
		switch {
		case len(r.Header) > MaxSyncHeader:
			return Errorf(EINVALID, "record %d of host %s has a header of %d bytes, more than %d", r.Index, r.Host, len(r.Header), MaxSyncHeader)
		case len(r.Body) > MaxSyncBody:
			return Errorf(EINVALID, "record %d of host %s has a body of %d bytes, more than %d", r.Index, r.Host, len(r.Body), MaxSyncBody)
		}
		total += int64(len(r.Header) + len(r.Body))
	}
	if total > MaxSyncBatchBytes {
		return Errorf(EINVALID, "a batch holds at most %d bytes of headers and bodies, not %d", MaxSyncBatchBytes, total)
	}
	return nil
}

// ValidSyncBatch checks a batch of records to put: within the limits of
// SyncBatchOverLimit, each record of a host named by a UUID (ValidID),
// at an index from 1, with a body (a sealed record is never empty).
func ValidSyncBatch(recs []SyncRecord) error {
	if err := SyncBatchOverLimit(recs); err != nil {
		return err
	}
	for _, r := range recs {
		if err := ValidID(r.Host); err != nil {
			return Errorf(EINVALID, "host id %q is not a UUID", Truncate(r.Host, 40))
		}
		if r.Index < 1 {
			return Errorf(EINVALID, "record %d of host %s: indexes start at 1", r.Index, r.Host)
		}
		if len(r.Body) == 0 {
			return Errorf(EINVALID, "record %d of host %s has no body", r.Index, r.Host)
		}
	}
	return nil
}

// HubLocks is a hub's store that several hub processes share
// (PostgreSQL): what one process holds, every other one sees, and a
// process that dies holds nothing any more. A hub whose store is one
// (docs/sync.md, "A hub of several processes") counts each user's pushes
// and serializes a user's first push over all its processes, not in its
// own memory.
type HubLocks interface {
	// TakePush takes one of slots places for a push of user's in scope
	// ("sync", "team"), held until release over every process on the
	// store; ok is false when all slots are held.
	TakePush(ctx context.Context, scope, user string, slots int) (release func(), ok bool, err error)
	// LockUser waits for user's lock named name, held until unlock over
	// every process on the store, or until ctx is done.
	LockUser(ctx context.Context, name, user string) (unlock func(), err error)
}
