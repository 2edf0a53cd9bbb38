package loom

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"time"
)

// Share is a share link's record on a hub: a session sealed on the
// user's machine (AES-256-GCM under a key that travels only in the
// link's fragment), kept as an opaque blob the hub cannot read. The hub
// knows who made it, when, until when it answers, and how big it is.
type Share struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	CreatedAt time.Time `json:"created_at"`
	// ExpiresAt is when the link stops answering; its ciphertext is
	// deleted by the next write to the hub's shares after that.
	ExpiresAt time.Time `json:"expires_at"`
	// RevokedAt is when its user revoked it; the ciphertext went then.
	RevokedAt *time.Time `json:"revoked_at"`
	// Size is the ciphertext's length in bytes; 0 once it is deleted.
	Size int64 `json:"size"`
}

// Live reports whether the link answers at now: neither revoked nor
// expired.
func (s *Share) Live(now time.Time) bool {
	return s.RevokedAt == nil && now.Before(s.ExpiresAt)
}

// State is "live", "revoked" or "expired" at now.
func (s *Share) State(now time.Time) string {
	switch {
	case s.RevokedAt != nil:
		return "revoked"
	case !now.Before(s.ExpiresAt):
		return "expired"
	}
	return "live"
}

// MarshalJSON writes times with milliseconds.
func (s Share) MarshalJSON() ([]byte, error) {
	type plain Share
	return json.Marshal(struct {
		plain
		CreatedAt jsonTime  `json:"created_at"`
		ExpiresAt jsonTime  `json:"expires_at"`
		RevokedAt *jsonTime `json:"revoked_at"`
	}{plain(s), jsonTime(s.CreatedAt), jsonTime(s.ExpiresAt), optTime(s.RevokedAt)})
}

// ShareStore keeps a hub's share links. The sqlite and postgres stores
// implement it next to Store. It never sees a key or a plaintext.
type ShareStore interface {
	// CreateShare keeps blob, userID's sealed session, until expires
	// (which must be later than the store's clock). Creating a share
	// also deletes the ciphertext of every share that has expired.
	CreateShare(ctx context.Context, userID string, blob []byte, expires time.Time) (*Share, error)
	// Shares lists userID's shares, revoked and expired ones included,
	// newest first.
	Shares(ctx context.Context, userID string) ([]*Share, error)
	// ShareBlob returns the ciphertext of the live share id; an unknown,
	// revoked or expired one is ENOTFOUND.
	ShareBlob(ctx context.Context, id string) ([]byte, error)
	// RevokeShare revokes userID's share id and deletes its ciphertext;
	// another user's share, or an unknown one, is ENOTFOUND. Revoking a
	// revoked share again keeps the first time.
	RevokeShare(ctx context.Context, userID, id string) error
}

// MaxShareBytes bounds one share's ciphertext: a session larger than
// this is refused before it is uploaded (loom share --turns cuts one
// down).
const MaxShareBytes = 32 << 20

// shareIDChars is base64url's alphabet, in which share ids are written.
// The first character of an id is drawn from all of it but '-' (its
// 63rd character), so that no id reads as a flag on a command line
// (loom share revoke ID): an id is 22 characters, the first of 63 and
// the other 21 of 64, which is 131.9 random bits where 16 random bytes
// in base64url gave 128. Ids made before, which may begin with '-', are
// still valid (ValidShareID) and keep working.
const shareIDChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// shareIDLen is the length of a share id: what base64url makes of 16
// bytes, as ids have always been.
const shareIDLen = 22

// NewShareID returns a fresh share id: 22 random characters of
// base64url (shareIDChars) that do not begin with '-', so that no link
// can be found by guessing ids.
func NewShareID() string {
	var b [shareIDLen]byte
	id := make([]byte, 0, shareIDLen)
	for len(id) < shareIDLen {
		if _, err := rand.Read(b[:]); err != nil {
			panic("loom: no randomness for a share id: " + err.Error())
		}
		for _, r := range b {
			// 256 is a multiple of 64, so r%64 is uniform; a '-' drawn
			// first is drawn again, which leaves the first character
			// uniform over the other 63.
			c := shareIDChars[r%64]
			if len(id) == 0 && c == '-' {
				continue
			}
			if id = append(id, c); len(id) == shareIDLen {
				break
			}
		}
	}
	return string(id)
}

// ValidShareID reports whether id has the shape of NewShareID's ids, so
// that a malformed one is answered without asking the store.
func ValidShareID(id string) bool {
	if len(id) != shareIDLen {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil
}

// NewShare checks a share asked of a store at now and returns its
// record; engines store it with blob.
func NewShare(userID string, blob []byte, expires, now time.Time) (*Share, error) {
	now = now.UTC().Truncate(time.Millisecond)
	expires = expires.UTC().Truncate(time.Millisecond)
	switch {
	case userID == "":
		return nil, Errorf(EINVALID, "a share needs a user")
	case len(blob) == 0:
		return nil, Errorf(EINVALID, "a share needs its sealed session")
	case len(blob) > MaxShareBytes:
		return nil, Errorf(EINVALID, "the sealed session is %d bytes, more than a share may hold (%d): share fewer turns", len(blob), MaxShareBytes)
	case !expires.After(now):
		return nil, Errorf(EINVALID, "a share's expiry must be in the future")
	}
	return &Share{ID: NewShareID(), UserID: userID, CreatedAt: now, ExpiresAt: expires, Size: int64(len(blob))}, nil
}

// ShareNotFound is what a link that does not answer gets: unknown,
// revoked and expired look the same.
func ShareNotFound() *Error {
	return Errorf(ENOTFOUND, "no such share: it was revoked, it expired, or it never existed")
}
