package importer

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/loomhq/loom"
)

// SessionID is the loom id of the imported session keyed key
// (<tool>:<source session id>, and for the forks and sub-agent sessions
// an importer makes, their own source identity: <tool>:<id>@<message>,
// <tool>:<id>/<agent>) of user, which began at start. It is a UUIDv7
// whose time is start (so imported ids sort, and their prefixes differ,
// as their sources' times do) and whose other bits come from SHA-256 of
// the user and the key: the same source imported on any machine, which
// sync then holds as one session, has the same id. The user is in it
// because ids are unique in a store and two users may import the same
// files into one; a user's machines that sync share their user. A zero
// start, or one outside UUIDv7's 48-bit milliseconds, counts as 0.
func SessionID(user, key string, start time.Time) string {
	h := sha256.New()
	h.Write([]byte("loom imported session\x00"))
	h.Write([]byte(user))
	h.Write([]byte{0})
	h.Write([]byte(key))
	sum := h.Sum(nil)

	var ms int64
	if !start.IsZero() {
		ms = start.UnixMilli()
	}
	return loom.IDFromHash(ms, sum)
}

// newID is the id of a new imported session keyed key that began at
// start: SessionID, unless a session of this store already has that id
// and is not the live copy (find found none): one in the trash, or
// another user's. Then it is a new id of its own (the copy made again
// is this machine's, as before ids were derived).
func (im *Importer) newID(ctx context.Context, key string, start time.Time) (string, error) {
	id := SessionID(im.UserID, key, start)
	_, err := im.Store.Session(ctx, id)
	switch {
	case loom.ErrorCode(err) == loom.ENOTFOUND:
		return id, nil
	case err != nil:
		return "", err
	}
	return loom.NewIDAt(start), nil
}
